package rueidisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

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
	require.Eventually(t, func() bool { return st.FollowStats().Subscriptions > 0 }, 10*time.Second, time.Millisecond)
}

// A reset on one instance reaches the other's cache at once, on one server
// and on a cluster; a subscription the server kills is renewed by rueidis,
// and the store drops its whole cache.
func TestResetsReachEveryInstance(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		testResetsReach(t, redistest.Start(t).Addr())
	})
	t.Run("cluster", func(t *testing.T) {
		testResetsReach(t, redistest.StartCluster(t)...)
	})
}

func testResetsReach(t *testing.T, addrs ...string) {
	ctx := context.Background()
	prefix := testPrefix()
	client := newClient(t, addrs...)
	a, err := New(newClient(t, addrs...), luascript.WithPrefix(prefix))
	require.NoError(t, err)
	b, err := New(client, luascript.WithPrefix(prefix))
	require.NoError(t, err)
	follow(t, a)
	follow(t, b)
	scripts := func() int64 { c := commandCalls(t, client); return c["evalsha"] + c["eval"] }
	take := func(st *luascript.Store, req core.TakeRequest) bool {
		d, err := st.Take(ctx, req)
		require.NoError(t, err)
		return d.Allowed
	}
	for i, key := range []string{"k1", "k2", "k3", "k4", "{k}\n"} {
		req := core.TakeRequest{Namespace: "login", Key: key, Algorithm: core.LeakyBucket, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
		require.True(t, take(a, req))
		require.False(t, take(a, req))
		require.False(t, take(b, req))
		before := scripts()
		require.False(t, take(a, req))
		require.False(t, take(b, req))
		require.Equal(t, before, scripts(), "both answer from their caches")
		require.NoError(t, a.Reset(ctx, req))
		require.Eventually(t, func() bool { return b.FollowStats().Announcements > uint64(i) }, 10*time.Second, time.Millisecond)
		assert.True(t, take(b, req), "B admits right after A's reset")
		require.False(t, take(b, req))
	}

	req := core.TakeRequest{Namespace: "login", Key: "k1", Algorithm: core.LeakyBucket, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
	before := scripts()
	require.False(t, take(b, req))
	require.Equal(t, before, scripts(), "cached")
	subs := b.FollowStats().Subscriptions
	for _, addr := range addrs { // a connection of its own: CLIENT KILL skips the caller's
		killer, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
		require.NoError(t, err)
		err = killer.Do(ctx, killer.B().ClientKill().TypePubsub().Build()).Error()
		killer.Close()
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return b.FollowStats().Subscriptions > subs }, 10*time.Second, time.Millisecond,
		"rueidis renews the subscription")
	assert.False(t, take(b, req))
	assert.Equal(t, before+1, scripts(), "the renewal dropped the cache: Redis was asked")
}
