package rules

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/memory"
)

// redisWait bounds every wait of the Redis tests for something the watcher
// does: far longer than it takes, so only a watcher that never does it fails.
const redisWait = 10 * time.Second

// redisPrefix is a prefix no other test uses, so tests may share a server.
func redisPrefix() string { return fmt.Sprintf("rwtest%x:", rand.Uint64()) }

// redisDoc is a valid rules document of version v whose one policy, api,
// has limit.
func redisDoc(v int64, limit string) string {
	return "schema: 1\nversion: " + strconv.FormatInt(v, 10) + "\npolicies:\n  - name: api\n    limits: [" + limit + "]\n"
}

// newRedisSet builds a Set of redisDoc(v, "1/s") on a memory store, whose
// reload hook sends every report on the channel returned.
func newRedisSet(t *testing.T, v int64) (*Set, chan Reload) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := Parse([]byte(redisDoc(v, "1/s")), "built-in")
	require.NoError(t, err)
	reloads := make(chan Reload, 100)
	s, err := New(st, doc, WithLogger(slog.New(slog.DiscardHandler)), WithReloadHook(func(r Reload) { reloads <- r }))
	require.NoError(t, err)
	return s, reloads
}

// nextReload returns the next report of the reload hook, failing t when none
// comes in redisWait.
func nextReload(t *testing.T, reloads chan Reload) Reload {
	t.Helper()
	select {
	case r := <-reloads:
		return r
	case <-time.After(redisWait):
		t.Fatalf("no reload reported in %s", redisWait)
		return Reload{}
	}
}

// nextLoad returns the next report of a document that took effect, skipping
// failures that wrap skip (and failing t on any other).
func nextLoad(t *testing.T, reloads chan Reload, skip error) Reload {
	t.Helper()
	for {
		r := nextReload(t, reloads)
		if r.Err == nil {
			return r
		}
		require.ErrorIs(t, r.Err, skip)
	}
}

// drain empties reloads.
func drain(reloads chan Reload) {
	for {
		select {
		case <-reloads:
		default:
			return
		}
	}
}

// requireNoReload fails t when a report is pending.
func requireNoReload(t *testing.T, reloads chan Reload) {
	t.Helper()
	select {
	case r := <-reloads:
		t.Fatalf("unexpected reload report %+v", r)
	default:
	}
}

// watch starts a watcher of s on b with the test's prefix and a poll interval
// of an hour (so only announcements, subscriptions and Refresh read Redis),
// and the options given after them; it is closed when t ends.
func watch(t *testing.T, s *Set, b RedisBackend, prefix string, opts ...RedisOption) *RedisWatcher {
	t.Helper()
	w, err := WatchRedis(s, b, append([]RedisOption{WithRedisPrefix(prefix), WithRedisPollInterval(time.Hour)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// waitStats waits until ok holds for the watcher's stats, failing t when it
// does not in redisWait.
func waitStats(t *testing.T, w *RedisWatcher, what string, ok func(RedisWatcherStats) bool) {
	t.Helper()
	deadline := time.Now().Add(redisWait)
	for !ok(w.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in %s; stats %+v", what, redisWait, w.Stats())
		}
		time.Sleep(2 * time.Millisecond) // waits for the watcher; moves no time
	}
}

// subscribedAndPolled waits until the watcher has n subscriptions and has
// read the version after the last.
func subscribedAndPolled(t *testing.T, w *RedisWatcher, n int64) {
	t.Helper()
	waitStats(t, w, fmt.Sprintf("subscription %d and its poll", n), func(s RedisWatcherStats) bool {
		return s.Subscriptions >= n && s.Polls >= n
	})
}

// redisDo sends a command to addr, failing t on an error.
func redisDo(t *testing.T, addr string, args ...string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), redisWait)
	defer cancel()
	reply, err := command(ctx, addr, args...)
	require.NoError(t, err, strings.Join(args, " "))
	return reply
}

// push pushes redisDoc(v, limit) through b, failing t on an error.
func push(t *testing.T, b RedisBackend, prefix string, v int64, limit string) {
	t.Helper()
	got, err := PushRules(context.Background(), b, []byte(redisDoc(v, limit)), WithRedisPrefix(prefix))
	require.NoError(t, err)
	require.Equal(t, v, got)
}
