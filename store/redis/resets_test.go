package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// announcementWait bounds the wait for an announcement to reach a store.
const announcementWait = 10 * time.Second

// follow runs st.FollowResets until t ends and waits for its subscription.
func follow(t *testing.T, st *luascript.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.FollowResets(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
	require.Eventually(t, func() bool { return st.FollowStats().Subscriptions > 0 }, announcementWait, time.Millisecond,
		"the store subscribes to the announcements")
}

// heard waits until st has heard n announcements in all.
func heard(t *testing.T, st *luascript.Store, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return st.FollowStats().Announcements >= n }, announcementWait, time.Millisecond,
		"announcement %d reaches the store", n)
}

// evalCalls counts the script calls the servers at addrs have run.
func evalCalls(t *testing.T, addrs ...string) int64 {
	calls := commandCalls(t, addrs...)
	return calls["evalsha"] + calls["eval"]
}

// take decides req on st and reports whether it was admitted.
func take(t *testing.T, st *luascript.Store, req core.TakeRequest) bool {
	t.Helper()
	d, err := st.Take(context.Background(), req)
	require.NoError(t, err)
	return d.Allowed
}

// A reset or a refund on one instance reaches the other's cache of denials
// at once, whatever key, on one server and on a cluster (whose keys live on
// other nodes than the one each store subscribed on).
func TestResetsReachEveryInstance(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		testResetsReach(t, func() redis.UniversalClient { return newClient(t, srv.Addr()) }, srv.Addr())
	})
	t.Run("cluster", func(t *testing.T) {
		addrs := redistest.StartCluster(t)
		testResetsReach(t, func() redis.UniversalClient { return newClusterClient(t, addrs) }, addrs...)
	})
}

func testResetsReach(t *testing.T, dial func() redis.UniversalClient, addrs ...string) {
	prefix := testPrefix()
	a, err := New(dial(), luascript.WithPrefix(prefix))
	require.NoError(t, err)
	b, err := New(dial(), luascript.WithPrefix(prefix))
	require.NoError(t, err)
	follow(t, a)
	follow(t, b)
	ctx := context.Background()
	keys := []string{"203.0.113.9", "k1", "k2", "k3", "k4", "k5", strings.Repeat("k", 10<<10), "{k}\n:%\x00"}
	for i, key := range keys {
		req := core.TakeRequest{Namespace: "login", Key: key, Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(2)}, Cost: 1}
		// deny caches the key's denial on both instances.
		deny := func() {
			t.Helper()
			for take(t, a, req) {
			}
			require.False(t, take(t, b, req))
			before := evalCalls(t, addrs...)
			require.False(t, take(t, a, req))
			require.False(t, take(t, b, req))
			require.Equal(t, before, evalCalls(t, addrs...), "both answer from their caches")
		}
		deny()
		n := uint64(2*i + 1)
		require.NoError(t, a.Reset(ctx, req))
		heard(t, a, n)
		heard(t, b, n)
		assert.True(t, take(t, b, req), "B admits right after A's reset")
		assert.True(t, take(t, a, req), "and so does A")

		deny()
		refund := req
		refund.Cost, refund.Now, refund.Admitted = -1, time.Now(), time.Now()
		_, err := b.Take(ctx, refund)
		require.NoError(t, err)
		heard(t, a, n+1)
		assert.True(t, take(t, a, req), "A admits right after B's refund")
	}
	assert.Zero(t, a.FollowStats().Ignored+b.FollowStats().Ignored)
}

// A denial Redis decided before a reset, whose reply is held by a proxy
// until after it, is answered but not cached: the next request goes to
// Redis and is admitted. The reset is the store's own, or another
// instance's, heard through the announcement.
func TestHeldDenialAfterReset(t *testing.T) {
	srv := redistest.Start(t)
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "own reset", true: "another instance's reset"}[remote]
		t.Run(name, func(t *testing.T) {
			proxy := redistest.StartHoldProxy(t, srv.Addr())
			prefix := testPrefix()
			a, err := New(newClient(t, proxy.Addr()), luascript.WithPrefix(prefix))
			require.NoError(t, err)
			b, err := New(newClient(t, srv.Addr()), luascript.WithPrefix(prefix))
			require.NoError(t, err)
			if remote {
				follow(t, a)
			}
			req := core.TakeRequest{Namespace: "api", Key: "k", Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
			require.True(t, take(t, a, req))

			held, release := proxy.HoldNextReply()
			denied := make(chan bool)
			go func() {
				d, err := a.Take(context.Background(), req)
				assert.NoError(t, err)
				denied <- !d.Allowed
			}()
			select {
			case <-held:
			case <-time.After(announcementWait):
				t.Fatal("the denial's reply never reached the proxy")
			}
			if remote {
				require.NoError(t, b.Reset(context.Background(), req))
				heard(t, a, 1)
			} else {
				require.NoError(t, a.Reset(context.Background(), req))
			}
			release()
			assert.True(t, <-denied, "Redis decided it before the reset")
			assert.True(t, take(t, a, req), "the held denial was not cached")
		})
	}
}

// Garbage on the channel changes nothing and is counted; the stores go on.
func TestGarbageOnTheChannel(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	prefix := testPrefix()
	st, err := New(client, luascript.WithPrefix(prefix))
	require.NoError(t, err)
	follow(t, st)
	req := core.TakeRequest{Namespace: "api", Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
	require.True(t, take(t, st, req))
	require.False(t, take(t, st, req))
	ctx := context.Background()
	garbage := []string{"", "x", strings.Repeat("f", 10<<10), "{api:k}\n", "02C35F12E303C117", "\xff\xfe\xfd"}
	for _, g := range garbage {
		require.NoError(t, client.Publish(ctx, prefix+"{resets}:announce", g).Err())
	}
	require.Eventually(t, func() bool { return st.FollowStats().Ignored == uint64(len(garbage)) }, announcementWait, time.Millisecond)
	before := evalCalls(t, srv.Addr())
	assert.False(t, take(t, st, req))
	assert.Equal(t, before, evalCalls(t, srv.Addr()), "the denial is still cached")
	assert.Zero(t, st.FollowStats().Announcements)
}

// A subscription the server kills is renewed, and the store drops its whole
// cache, since announcements may have been missed meanwhile.
func TestLostSubscriptionDropsTheCache(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st, err := New(client, luascript.WithPrefix(testPrefix()))
	require.NoError(t, err)
	follow(t, st)
	req := core.TakeRequest{Namespace: "api", Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
	require.True(t, take(t, st, req))
	require.False(t, take(t, st, req))
	before := evalCalls(t, srv.Addr())
	require.False(t, take(t, st, req))
	require.Equal(t, before, evalCalls(t, srv.Addr()), "the denial is cached")

	require.NoError(t, client.Do(context.Background(), "client", "kill", "type", "pubsub").Err())
	require.Eventually(t, func() bool { s := st.FollowStats(); return s.Lost >= 1 && s.Subscriptions >= 2 }, announcementWait, time.Millisecond,
		"the subscription is lost and renewed")
	assert.False(t, take(t, st, req), "Redis still denies")
	assert.Equal(t, before+1, evalCalls(t, srv.Addr()), "the cached denial was dropped: Redis was asked")
}
