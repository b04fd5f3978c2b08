package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
)

const inflightRules = `schema: 1
version: 1
policies:
  - name: reports
    match: {prefixes: [/reports]}
    key: {header: X-API-Key}
    limits: [100/h]
    concurrency: 2
    lease: 20s
  - name: plain
    match: {prefixes: [/plain]}
    limits: [100/h]
`

// key show reports how many of a key's in-flight slots the instances hold,
// read from a real Redis; a policy without concurrency says nothing of them.
func TestKeyShowSlots(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(inflightRules), 0o600))
	require.Equal(t, exitOK, tg.run(t, "rules", "push", path).code)
	a, b := instance(t, tg), instance(t, tg)
	var running []httplimit.Pass
	for _, inst := range []*rules.Set{a, b} { // two instances sharing one Redis
		r := httptest.NewRequest("GET", "/reports/q3", nil)
		r.Header.Set("X-API-Key", "k1")
		pass, next := inst.Handle(r.Context(), stdhttp.View(r), httptest.NewRecorder())
		require.True(t, next)
		running = append(running, pass)
	}

	res := tg.run(t, "key", "show", "reports", "k1")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `^reports: 100/h: remaining 98, whole again in 1m1[12][0-9.]*s\nreports: in flight: 2 of 2 slots held \(a crashed instance's come back within 20s\)\n$`, res.stdout)
	for _, p := range running {
		p.Release()
	}
	res = tg.run(t, "key", "show", "reports", "k1")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "reports: in flight: 0 of 2 slots held")

	res = tg.run(t, "key", "show", "plain", "192.0.2.1")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Equal(t, "plain: 100/h: remaining 100, whole again in 0s\n", res.stdout)
}
