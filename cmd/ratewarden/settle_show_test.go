package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/stdhttp"
)

const settleRules = `schema: 1
version: 1
policies:
  - name: llm
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    algorithm: gcra
    limits: [100/h]
    settle: {header: X-Cost, reserve: 1, debt: 20}
`

// key show reports what a key owes after a settle charged it beyond its
// quota, and when a request fits again, read from a real Redis.
func TestKeyShowDebt(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(settleRules), 0o600))
	require.Equal(t, exitOK, tg.run(t, "rules", "push", path).code)
	inst := instance(t, tg)
	r := httptest.NewRequest("GET", "/api/complete", nil)
	r.Header.Set("X-API-Key", "k1")
	w := httptest.NewRecorder()
	pass, next := inst.Handle(r.Context(), stdhttp.View(r), w)
	require.True(t, next)
	w.Header().Set("X-Cost", "150") // 100 spend the quota, 20 go into debt, 30 are forgiven
	pass.Settle(200, w)
	pass.Finish(200)

	res := tg.run(t, "key", "show", "llm", "k1")
	require.Equal(t, exitOK, res.code, res.stderr)
	line := strings.TrimSuffix(res.stdout, "\n")
	assert.Regexp(t, `^llm: 100/h: remaining 0, whole again in 1h1[12]m[0-9.]+s, owes 20 \(paid back in 1[12]m[0-9.]+s\)$`, line)

	res = tg.run(t, "key", "show", "llm", "k2")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "llm: 100/h: remaining 100, whole again in 0s\n", res.stdout, "a key that owes nothing says nothing of a debt")
}
