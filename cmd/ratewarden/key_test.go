package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// instance is an application instance of the rules in the target's Redis:
// a Set on the Redis store under the target's prefix.
func instance(t *testing.T, tg target) *rules.Set {
	t.Helper()
	b, err := redisstore.NewRulesBackend(tg.client)
	require.NoError(t, err)
	raw, _, err := rules.FetchRules(context.Background(), b, rules.WithRedisPrefix(tg.prefix))
	require.NoError(t, err)
	doc, err := rules.Parse(raw, "redis")
	require.NoError(t, err)
	st, err := redisstore.New(tg.client, luascript.WithPrefix(tg.prefix), luascript.WithLocalCache(0))
	require.NoError(t, err)
	s, err := rules.New(st, doc, rules.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	return s
}

// apiRequest sends GET /api with key through s and reports whether it went
// on.
func apiRequest(t *testing.T, s *rules.Set, key string) bool {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/items", nil)
	r.Header.Set("X-API-Key", key)
	_, next := s.Handle(r.Context(), stdhttp.View(r), httptest.NewRecorder())
	return next
}

// key show reads what the instances counted, under every tier or one, or
// the key's override; key reset clears it for every instance.
func TestKeyCommands(t *testing.T) {
	t.Parallel()
	for name, start := range targets {
		t.Run(name, func(t *testing.T) {
			tg := start(t)
			require.Equal(t, exitOK, tg.run(t, "rules", "push", "testdata/rules.yaml").code)
			inst := instance(t, tg)
			require.True(t, apiRequest(t, inst, "k1"))
			require.True(t, apiRequest(t, inst, "k1"))

			r := tg.run(t, "key", "show", "api", "k1")
			require.Equal(t, exitOK, r.code, r.stderr)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			require.Len(t, lines, 2, r.stdout)
			assert.Regexp(t, `^api/free: 5/h: remaining 3, whole again in 2[34]m[0-9.]+s$`, lines[0])
			assert.Equal(t, "api/paid: 50/h: remaining 50, whole again in 0s", lines[1])
			assert.Empty(t, r.stderr)

			for _, c := range []struct{ policy, key, want string }{
				{"api/paid", "k1", "api/paid: 50/h: remaining 50, whole again in 0s\n"},
				{"api", "partner", "api/override: 500/h: remaining 500, whole again in 0s\n"},
				{"api", "leaked", "api/override: blocked: every request is denied\n"},
				{"api", "monitor", "api/override: unlimited\n"},
				{"login", "192.0.2.1", "login: 5/m: remaining 5, whole again in 0s\n"},
				{"api/free", strings.Repeat("k", 10<<10), "api/free: 5/h: remaining 5, whole again in 0s\n"},
			} {
				r := tg.run(t, "key", "show", c.policy, c.key)
				assert.Equal(t, exitOK, r.code, r.stderr)
				assert.Equal(t, c.want, r.stdout, c.policy)
			}

			r = tg.run(t, "key", "reset", "api", "k1")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Equal(t, "reset \"k1\" under policy api (every tier and its override)\n", r.stdout)
			r = tg.run(t, "key", "show", "api/free", "k1")
			assert.Equal(t, "api/free: 5/h: remaining 5, whole again in 0s\n", r.stdout)
			peek, err := inst.Peek(context.Background(), "api", "k1")
			require.NoError(t, err)
			assert.Equal(t, int64(5), peek[0].Decision.Remaining, "the instance sees the reset")

			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"key", "show", "health", "x"}, "no such limiting policy: health is unlimited, with no counters"},
				{[]string{"key", "show", "nope", "x"}, `the rules in Redis (version 7) have no policy "nope"; they have login, api, api-writes`},
				{[]string{"key", "reset", "nope", "x"}, `have no policy "nope"`},
				{[]string{"key", "show", "api/gold", "x"}, `policy api has no tier "gold" in the rules in Redis (version 7)`},
			} {
				r := tg.run(t, c.args...)
				assert.Equal(t, exitProblems, r.code, c.args)
				assert.Contains(t, r.stderr, c.want)
				assert.Empty(t, r.stdout)
			}
		})
	}
}

// With no rules in Redis, the key commands say so.
func TestKeyCommandsNoRules(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	for _, cmd := range []string{"show", "reset"} {
		r := tg.run(t, "key", cmd, "api", "k")
		assert.Equal(t, exitProblems, r.code)
		assert.Contains(t, r.stderr, "ratewarden: no rules in redis")
	}
}
