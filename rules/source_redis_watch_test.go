package rules

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// At start the watcher loads what Redis holds; then every push is loaded on
// its announcement (polls are an hour apart), and the reload hook hears each.
func TestWatchRedisFollowsPushes(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	prefix := redisPrefix()
	push(t, b, prefix, 2, "2/s")
	s, reloads := newRedisSet(t, 1)

	w := watch(t, s, b, prefix)
	assert.Equal(t, redisLoad(2, "2/s"), nextReload(t, reloads), "loaded at start")
	assert.Equal(t, int64(2), s.Version())
	assert.Equal(t, []core.Limit{core.PerSecond(2)}, s.Document().Policies[0].Limits)
	subscribedAndPolled(t, w, 1)

	for v := int64(3); v <= 5; v++ {
		push(t, b, prefix, v, "3/s")
		assert.Equal(t, redisLoad(v, "3/s"), nextReload(t, reloads))
		assert.Equal(t, v, s.Version())
	}
	waitStats(t, w, "4 loads: at start and on every announcement", func(s RedisWatcherStats) bool { return s.Loads == 4 })
	st := w.Stats()
	assert.Equal(t, int64(3), st.Announcements)
	assert.Equal(t, int64(1), st.Subscriptions)
	assert.Zero(t, st.Failures)
	requireNoReload(t, reloads)
}

// A document whose version and digest the Set already has is not loaded
// again, and an announcement of them costs no fetch.
func TestWatchRedisSameVersion(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	prefix := redisPrefix()
	push(t, b, prefix, 1, "1/s")
	s, reloads := newRedisSet(t, 1)
	w := watch(t, s, b, prefix)
	subscribedAndPolled(t, w, 1)
	redisDo(t, b.addr, "PUBLISH", prefix+"{rules}:announce", s.Identity().stamp())
	waitStats(t, w, "the announcement", func(s RedisWatcherStats) bool { return s.Announcements == 1 })
	require.NoError(t, w.Refresh(context.Background()))
	assert.Zero(t, w.Stats().Loads)
	assert.Zero(t, w.Stats().Failures)
	requireNoReload(t, reloads)
}

// CLIENT KILL TYPE pubsub ends the subscription; the watcher subscribes again
// and reads the version at once. A push made while it was unsubscribed is
// loaded by that read; a push made after it, by its announcement.
func TestWatchRedisResubscribes(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	b.gate = make(chan struct{})
	prefix := redisPrefix()
	s, reloads := newRedisSet(t, 1)
	w := watch(t, s, b, prefix)
	assert.ErrorIs(t, nextReload(t, reloads).Err, ErrNoRules, "nothing pushed yet")
	subscribedAndPolled(t, w, 1)

	killPubSub(t, srv.Addr())
	push(t, b, prefix, 2, "2/s") // announced to nobody
	b.gate <- struct{}{}         // let the watcher subscribe again
	assert.Equal(t, redisLoad(2, "2/s"), nextReload(t, reloads))
	subscribedAndPolled(t, w, 2)
	assert.Zero(t, w.Stats().Announcements, "loaded by the read after subscribing again")

	push(t, b, prefix, 3, "3/s")
	assert.Equal(t, redisLoad(3, "3/s"), nextReload(t, reloads))
	waitStats(t, w, "2 loads", func(s RedisWatcherStats) bool { return s.Loads == 2 })
	st := w.Stats()
	assert.Equal(t, int64(1), st.Announcements, "loaded by the announcement on the new subscription")
	assert.Equal(t, int64(2), st.Subscriptions)
}

// killPubSub kills every subscribed client of the server at addr.
func killPubSub(t *testing.T, addr string) {
	t.Helper()
	n, ok := redisDo(t, addr, "CLIENT", "KILL", "TYPE", "pubsub").(int64)
	require.True(t, ok)
	require.Positive(t, n, "a subscriber was killed")
}

// A version written without an announcement (a lost one) is found by the
// poll, which also renews the subscription, since it may be dead; Refresh
// finds one at once.
func TestWatchRedisPolls(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	prefix := redisPrefix()
	key := prefix + "{rules}:doc"
	s, reloads := newRedisSet(t, 1)
	w := watch(t, s, b, prefix, WithRedisPollInterval(minPollInterval*2)) // a poll needs a real interval
	assert.ErrorIs(t, nextReload(t, reloads).Err, ErrNoRules)
	subscribedAndPolled(t, w, 1)
	redisDo(t, srv.Addr(), "HSET", key, "text", redisDoc(2, "2/s"), "version", "2")
	assert.Equal(t, redisLoad(2, "2/s"), nextReload(t, reloads))
	waitStats(t, w, "a renewed subscription", func(s RedisWatcherStats) bool { return s.Subscriptions >= 2 && s.Loads == 1 })
	assert.Zero(t, w.Stats().Announcements)

	require.NoError(t, w.Close())
	w2 := watch(t, s, b, prefix)
	redisDo(t, srv.Addr(), "HSET", key, "text", redisDoc(3, "3/s"), "version", "3")
	require.NoError(t, w2.Refresh(context.Background()))
	assert.Equal(t, int64(3), s.Version())
	assert.Equal(t, int64(1), w2.Stats().Loads)
}

// Redis down at start: the fallback file is loaded, and the hook hears both;
// when Redis comes up with rules, they take over.
func TestWatchRedisDownAtStart(t *testing.T) {
	srv := redistest.StartLocal(t)
	srv.Stop(t)
	prefix := redisPrefix()
	fallback := filepath.Join(t.TempDir(), "fallback.yaml")
	require.NoError(t, os.WriteFile(fallback, []byte(redisDoc(5, "5/s")), 0o644))
	s, reloads := newRedisSet(t, 1)
	b := newRESP(srv.Addr())

	w := watch(t, s, b, prefix, WithFallbackFile(fallback), WithRedisPollInterval(minPollInterval*5))
	r := nextReload(t, reloads)
	assert.Equal(t, RedisSource, r.Source)
	assert.Equal(t, int64(1), r.Version, "reported with the rules in force then")
	require.ErrorIs(t, r.Err, ErrRedisFailed)
	assert.Equal(t, Reload{Source: fallback, Version: 5, Digest: redisLoad(5, "5/s").Digest}, nextReload(t, reloads))
	assert.Equal(t, int64(5), s.Version())

	srv.Restart(t) // up, and empty
	push(t, b, prefix, 7, "7/s")
	assert.Equal(t, redisLoad(7, "7/s"), nextLoad(t, reloads, ErrNoRules))
	assert.Equal(t, []core.Limit{core.PerSecond(7)}, s.Document().Policies[0].Limits)
	subscribedAndPolled(t, w, 1)
	push(t, b, prefix, 8, "8/s")
	assert.Equal(t, redisLoad(8, "8/s"), nextReload(t, reloads))
}

// Without a fallback file, or with one that cannot be used, the Set keeps
// the rules it was built with, and the hook hears why.
func TestWatchRedisDownNoFallback(t *testing.T) {
	srv := redistest.StartLocal(t)
	srv.Stop(t)
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	require.NoError(t, os.WriteFile(invalid, []byte("schema: 1\nversion: 2\npolicies: [{name: api, limits: [1/x]}]\n"), 0o644))
	tests := []struct {
		name     string
		opts     []RedisOption
		fallback func(t *testing.T, r Reload)
	}{
		{"no fallback", nil, nil},
		{"missing fallback", []RedisOption{WithFallbackFile(filepath.Join(dir, "missing.yaml"))}, func(t *testing.T, r Reload) {
			assert.ErrorIs(t, r.Err, os.ErrNotExist)
		}},
		{"invalid fallback", []RedisOption{WithFallbackFile(invalid)}, func(t *testing.T, r Reload) {
			assert.ErrorIs(t, r.Err, ErrInvalidRules)
			assert.Contains(t, r.Err.Error(), invalid+":3:")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, reloads := newRedisSet(t, 1)
			watch(t, s, newRESP(srv.Addr()), redisPrefix(), tt.opts...)
			r := nextReload(t, reloads)
			assert.ErrorIs(t, r.Err, ErrRedisFailed)
			if tt.fallback != nil {
				r := nextReload(t, reloads)
				assert.Equal(t, int64(1), r.Version)
				assert.NotEqual(t, RedisSource, r.Source)
				tt.fallback(t, r)
			}
			assert.Equal(t, int64(1), s.Version())
			assert.Equal(t, []core.Limit{core.PerSecond(1)}, s.Document().Policies[0].Limits)
		})
	}
}

// Garbage in the rules key, or a document the Set refuses, leaves the rules
// in force, is reported once (not at every poll), and a good push then takes
// effect.
func TestWatchRedisGarbage(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	tests := []struct {
		name  string
		setup func(key string) []string
		want  error
		next  int64 // the version a push then takes
	}{
		{"wrong type", func(key string) []string { return []string{"SET", key, "x"} }, ErrRedisGarbage, 0},
		{"version not a number", func(key string) []string { return []string{"HSET", key, "version", "x", "text", "x"} }, ErrRedisGarbage, 0},
		{"invalid text", func(key string) []string {
			return []string{"HSET", key, "version", "4", "text", "schema: 1\nversion: 4\n"}
		}, ErrInvalidRules, 5},
		{"newer schema", func(key string) []string {
			return []string{"HSET", key, "version", "4", "text", strings.Replace(redisDoc(4, "1/s"), "schema: 1", "schema: 2", 1)}
		}, ErrInvalidRules, 5},
		{"refused by the Set", func(key string) []string { // a JWT claim key without WithClaimKey
			return []string{"HSET", key, "version", "4", "text", redisDoc(4, "1/s") + "    key: {jwt_claim: sub}\n"}
		}, core.ErrInvalidOption, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := redisPrefix()
			redisDo(t, srv.Addr(), tt.setup(prefix+"{rules}:doc")...)
			s, reloads := newRedisSet(t, 1)
			w := watch(t, s, b, prefix, WithRedisPollInterval(minPollInterval))
			r := nextReload(t, reloads)
			assert.Equal(t, RedisSource, r.Source)
			assert.Equal(t, int64(1), r.Version)
			require.ErrorIs(t, r.Err, tt.want)
			waitStats(t, w, "polls", func(s RedisWatcherStats) bool { return s.Polls >= 5 })
			requireNoReload(t, reloads)
			assert.Equal(t, int64(1), s.Version())
			assert.ErrorIs(t, w.Refresh(context.Background()), tt.want, "Refresh tries again, and says why it fails")
			if tt.next == 0 {
				return
			}
			drain(reloads) // the Set reports a refusal on every try
			push(t, b, prefix, tt.next, "6/s")
			assert.Equal(t, redisLoad(tt.next, "6/s"), nextReload(t, reloads))
		})
	}
}

// Close ends the watcher's goroutines (a blocked subscription too) and is
// idempotent; Refresh then fails.
func TestWatchRedisClose(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	s, _ := newRedisSet(t, 1)
	w := watch(t, s, b, redisPrefix())
	subscribedAndPolled(t, w, 1)
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	assert.ErrorIs(t, w.Refresh(context.Background()), ErrWatcherClosed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w2 := watch(t, s, b, redisPrefix())
	assert.ErrorIs(t, w2.Refresh(ctx), context.Canceled)
}

// Pushes land while requests are decided and the version is read: the race
// detector watches, and the last push is in force at the end.
func TestWatchRedisConcurrent(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	prefix := redisPrefix()
	s, reloads := newRedisSet(t, 1)
	w := watch(t, s, b, prefix)
	_ = nextReload(t, reloads) // no rules yet
	subscribedAndPolled(t, w, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			r := httptest.NewRequest("GET", "/api", nil)
			_, _ = s.Handle(r.Context(), stdhttp.View(r), httptest.NewRecorder())
			_ = s.Document().Policies[0].Limits
		}
	}()
	for v := int64(2); v <= 20; v++ {
		push(t, b, prefix, v, "4/s")
		require.NoError(t, w.Refresh(context.Background()))
	}
	cancel()
	wg.Wait()
	assert.Equal(t, int64(20), s.Version())
}
