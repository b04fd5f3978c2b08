package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// target is a Redis the tool talks to: its --redis URL, a client for the
// test's own checks, and a prefix no other test uses.
type target struct {
	url, prefix string
	client      redis.UniversalClient
}

// targets start a single server and a cluster.
var targets = map[string]func(t *testing.T) target{
	"single": func(t *testing.T) target {
		srv := redistest.Start(t)
		return newTarget(t, "redis://"+srv.Addr(), &redis.UniversalOptions{Addrs: []string{srv.Addr()}})
	},
	"cluster": func(t *testing.T) target {
		addrs := redistest.StartCluster(t)
		return newTarget(t, "redis-cluster://"+strings.Join(addrs, ","), &redis.UniversalOptions{Addrs: addrs, IsClusterMode: true})
	},
}

func newTarget(t *testing.T, url string, opts *redis.UniversalOptions) target {
	opts.ContextTimeoutEnabled = true
	c := redis.NewUniversalClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return target{url: url, prefix: fmt.Sprintf("rwtest%x:", rand.Uint64()), client: c}
}

// run runs the tool against the target.
func (tg target) run(t *testing.T, args ...string) result {
	t.Helper()
	return ratewarden(t, nil, append(args, "--redis", tg.url, "--prefix", tg.prefix)...)
}

func (tg target) docKey() string { return tg.prefix + "{rules}:doc" }

// rules push, show and diff on a single server and a cluster: a push
// refused for its version or its problems leaves Redis as it was; show
// prints exactly what was pushed; diff says what a push would change.
func TestRulesCommands(t *testing.T) {
	t.Parallel()
	for name, start := range targets {
		t.Run(name, func(t *testing.T) {
			tg := start(t)
			r := tg.run(t, "rules", "show")
			assert.Equal(t, exitProblems, r.code)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, "ratewarden: no rules in redis: "+tg.docKey()+" does not exist")

			r = tg.run(t, "rules", "diff", "testdata/rules.yaml")
			assert.Equal(t, exitProblems, r.code, "no rules differ from any")
			assert.Contains(t, r.stdout, tg.docKey()+" holds no rules: every policy of testdata/rules.yaml is added\n+ policy login\n")

			r = tg.run(t, "rules", "push", "testdata/rules.yaml")
			require.Equal(t, exitOK, r.code, r.stderr)
			v7 := fileIdentity(t, "testdata/rules.yaml")
			pushed := "pushed testdata/rules.yaml: " + v7 + " is in " + tg.docKey() + ", announced on " + tg.prefix + "{rules}:announce\n"
			assert.Equal(t, pushed, r.stdout)
			assert.Empty(t, r.stderr)

			r = tg.run(t, "rules", "push", "testdata/rules.yaml")
			assert.Equal(t, exitOK, r.code, "the rules Redis holds, again: a no-op")
			assert.Equal(t, pushed, r.stdout)
			assert.Empty(t, r.stderr)

			other := filepath.Join(t.TempDir(), "rules.yaml")
			raw, err := os.ReadFile("testdata/rules.yaml")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(other, []byte(strings.Replace(string(raw), "free: [5/h]", "free: [6/h]", 1)), 0o644))
			r = tg.run(t, "rules", "push", other)
			assert.Equal(t, exitProblems, r.code)
			assert.Equal(t, "ratewarden: same rules version, other rules: "+fileIdentity(t, other)+" pushed; "+tg.docKey()+" holds "+v7+": raise the document's version above 7\n", r.stderr)
			assert.Empty(t, r.stdout)
			r = tg.run(t, "rules", "diff", other)
			assert.Equal(t, exitProblems, r.code)
			assert.Contains(t, r.stdout, "digest: "+rules.ShortDigest(mustDigest(t, "testdata/rules.yaml"))+" -> "+rules.ShortDigest(mustDigest(t, other))+"\n~ policy api\n")
			assert.Contains(t, r.stdout, "note: version 7 is not newer than the stored 7")

			r = tg.run(t, "rules", "push", "testdata/invalid.yaml")
			assert.Equal(t, exitProblems, r.code)
			assert.Contains(t, r.stderr, "testdata/invalid.yaml: 3 problems")

			r = tg.run(t, "rules", "diff", "testdata/invalid.yaml")
			assert.Equal(t, exitUsage, r.code, "an invalid file is trouble for rules diff (2), not a difference (1)")
			assert.Contains(t, r.stderr, "testdata/invalid.yaml: 3 problems")
			assert.Empty(t, r.stdout)

			want, err := os.ReadFile("testdata/rules.yaml")
			require.NoError(t, err)
			r = tg.run(t, "rules", "show")
			assert.Equal(t, exitOK, r.code, r.stderr)
			assert.Equal(t, string(want), r.stdout, "exactly what was pushed")
			assert.Equal(t, tg.docKey()+" holds "+v7+"\n", r.stderr)

			r = tg.run(t, "rules", "diff", "testdata/rules.yaml")
			assert.Equal(t, exitOK, r.code, r.stderr)
			assert.Equal(t, "no difference: "+tg.docKey()+" holds testdata/rules.yaml ("+v7+")\n", r.stdout)

			r = tg.run(t, "rules", "diff", "testdata/rules-v8.yaml")
			assert.Equal(t, exitProblems, r.code, r.stderr)
			assert.Equal(t, "version: 7 -> 8\ndigest: "+rules.ShortDigest(mustDigest(t, "testdata/rules.yaml"))+" -> "+
				rules.ShortDigest(mustDigest(t, "testdata/rules-v8.yaml"))+"\n"+diffV7V8, r.stdout)
			assert.Empty(t, r.stderr)

			r = tg.run(t, "rules", "push", "testdata/rules-v8.yaml")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "\ncounters (what clients have used):\n  api tier paid: re-expressed (50/h -> 100/h)\n", "a push says what it does to the counters")
			assert.Contains(t, r.stdout, "  login: dropped\n")
			r = tg.run(t, "rules", "push", "testdata/rules.yaml")
			assert.Equal(t, exitProblems, r.code, "an older version is refused")
			assert.Contains(t, r.stderr, "version 7 pushed, "+tg.docKey()+" holds version 8")
		})
	}
}

// diffV7V8 is what rules diff says of rules-v8.yaml against rules.yaml.
// (after its version and digest lines).
const diffV7V8 = `~ policy api
    tiers.paid: [50/h] -> [100/h]
    tiers.gold: added: [1000/h]
    overrides["leaked"]: blocked -> [1/h]
~ policy api-writes
    dry_run: true -> false
+ policy search
    match.paths: [/search/{q...}]
    key: ip
    algorithm: gcra
    limits: [3/s]
    cost: 1
    fail: open
    dry_run: false
    count: all
    unlimited: false
- policy login
counters (what clients have used):
  api tier paid: re-expressed (50/h -> 100/h)
  api tier gold: new
  api override leaked: new
  search: new
  login: dropped
`

// A rules key holding garbage is an error for every command, and a push
// leaves it alone.
func TestRulesCommandsGarbage(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	ctx := context.Background()
	require.NoError(t, tg.client.Set(ctx, tg.docKey(), "schema: 1", 0).Err())
	for _, args := range [][]string{
		{"rules", "show"}, {"rules", "diff", "testdata/rules.yaml"}, {"rules", "push", "testdata/rules.yaml"}, {"key", "show", "api", "k"},
	} {
		r := tg.run(t, args...)
		want := exitProblems
		if args[1] == "diff" {
			want = exitUsage // diff(1)'s trouble
		}
		assert.Equal(t, want, r.code, args)
		assert.Contains(t, r.stderr, "ratewarden: unreadable rules in redis: "+tg.docKey()+" holds a string, not the hash a push writes", args)
	}
	got, err := tg.client.Get(ctx, tg.docKey()).Result()
	require.NoError(t, err)
	assert.Equal(t, "schema: 1", got)

	bad := "schema: 1\nversion: 3\npolicies:\n  - {name: api, limits: [1/x]}\n"
	require.NoError(t, tg.client.Del(ctx, tg.docKey()).Err())
	require.NoError(t, tg.client.HSet(ctx, tg.docKey(), "text", bad, "version", "3").Err())
	r := tg.run(t, "rules", "show")
	assert.Equal(t, exitProblems, r.code)
	assert.Equal(t, bad, r.stdout, "the text is shown all the same")
	assert.Contains(t, r.stderr, "redis:4:")
}

// Redis down or hung: every command that needs it exits 1 and says why,
// within --timeout.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.StartLocal(t)
	srv.Pause(t)
	for _, args := range [][]string{{"rules", "show"}, {"rules", "push", "testdata/rules.yaml"}, {"key", "reset", "api", "k"}} {
		r := ratewarden(t, nil, append(args, "--redis", "redis://"+srv.Addr(), "--timeout", "300ms")...)
		assert.Equal(t, exitProblems, r.code, args)
		assert.Contains(t, r.stderr, "ratewarden: redis failed", args)
	}
	srv.Resume(t)
	srv.Stop(t)
	r := ratewarden(t, nil, "rules", "diff", "testdata/rules.yaml", "--redis", "redis://"+srv.Addr())
	assert.Equal(t, exitUsage, r.code, "rules diff exits as diff(1): 2 is trouble, 1 a difference")
	assert.Contains(t, r.stderr, "connect: connection refused")
	assert.NotContains(t, r.stderr, "trouble", "the exit status says it, not the message")
	r = ratewarden(t, []string{"RATEWARDEN_REDIS=redis://" + srv.Addr()}, "rules", "show")
	assert.Equal(t, exitProblems, r.code, "$RATEWARDEN_REDIS names the Redis")
	assert.Contains(t, r.stderr, srv.Addr())
}

// mustDigest is the digest of the rules file path.
func mustDigest(t *testing.T, path string) string {
	t.Helper()
	doc, err := rules.ReadFile(path)
	require.NoError(t, err)
	return doc.Digest()
}

// fileIdentity is what the tool prints of the rules file path: "version 7,
// digest 3f2a9c1b7e04".
func fileIdentity(t *testing.T, path string) string {
	t.Helper()
	doc, err := rules.ReadFile(path)
	require.NoError(t, err)
	return rules.Identity{Version: doc.Version, Digest: doc.Digest()}.String()
}
