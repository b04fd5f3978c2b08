package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const penaltyRules = `schema: 1
version: 1
policies:
  - name: login
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    limits: [2/h]
    block_for: 15m
`

// key show reports a key in a policy's penalty box with the block's end;
// key reset lifts the block, for every instance.
func TestKeyShowAndResetPenalty(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(penaltyRules), 0o600))
	require.Equal(t, exitOK, tg.run(t, "rules", "push", path).code)
	inst, other := instance(t, tg), instance(t, tg)
	require.True(t, apiRequest(t, inst, "k1"))
	require.True(t, apiRequest(t, inst, "k1"))
	before := time.Now()
	require.False(t, apiRequest(t, inst, "k1"), "denied: the block starts")

	r := tg.run(t, "key", "show", "login", "k1")
	require.Equal(t, exitOK, r.code, r.stderr)
	line := strings.TrimSuffix(r.stdout, "\n")
	m := regexp.MustCompile(`^login: 2/h: blocked by the penalty box until (\S+) \(in (\S+)\): every request is refused$`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	end, err := time.Parse(time.RFC3339, m[1])
	require.NoError(t, err)
	assert.InDelta(t, before.Add(15*time.Minute).Unix(), end.Unix(), 5, "the block's end")
	left, err := time.ParseDuration(m[2])
	require.NoError(t, err)
	assert.InDelta(t, (15 * time.Minute).Seconds(), left.Seconds(), 5)
	r = tg.run(t, "key", "show", "login", "k2")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "login: 2/h: remaining 2, whole again in 0s\n", r.stdout, "another key is not blocked")

	require.False(t, apiRequest(t, other, "k1"), "every instance sees the block")
	r = tg.run(t, "key", "reset", "login", "k1")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.True(t, apiRequest(t, other, "k1"), "the reset lifted the block")
	r = tg.run(t, "key", "show", "login", "k1")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `^login: 2/h: remaining 1, whole again in `, r.stdout)
}
