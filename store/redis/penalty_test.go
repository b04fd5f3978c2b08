package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// A penalty box on Redis, between two instances with their local caches of
// denials on, on Redis's clock: the block one instance started refuses the
// other's requests; the instance that cached the block's denial answers
// from its cache until the block's end, with no script call; the block's
// key carries a TTL to its end; and a reset on one instance lifts the block
// on the other at once (its cached denial dropped with the announcement).
func TestPenaltyAcrossInstances(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		testPenaltyAcross(t, func() redis.UniversalClient { return newClient(t, srv.Addr()) }, srv.Addr())
	})
	t.Run("cluster", func(t *testing.T) {
		addrs := redistest.StartCluster(t)
		testPenaltyAcross(t, func() redis.UniversalClient { return newClusterClient(t, addrs) }, addrs...)
	})
}

func testPenaltyAcross(t *testing.T, dial func() redis.UniversalClient, addrs ...string) {
	prefix := testPrefix()
	client := dial()
	sa, err := New(client, luascript.WithPrefix(prefix))
	require.NoError(t, err)
	sb, err := New(dial(), luascript.WithPrefix(prefix))
	require.NoError(t, err)
	follow(t, sa)
	follow(t, sb)
	newLim := func(st core.Store) *core.Limiter {
		lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(1), core.WithBlockFor(time.Hour))
		require.NoError(t, err)
		return lim
	}
	a, b := newLim(sa), newLim(sb)
	ctx := context.Background()

	d, err := a.Allow(ctx, "client")
	require.NoError(t, err)
	require.True(t, d.Allowed)
	d, err = a.Allow(ctx, "client")
	require.NoError(t, err)
	require.True(t, d.BlockStarted)
	assert.Equal(t, time.Hour, d.RetryAfter)

	before := evalCalls(t, addrs...)
	d, err = a.Allow(ctx, "client")
	require.NoError(t, err)
	assert.True(t, d.Blocked)
	assert.Equal(t, before, evalCalls(t, addrs...), "the block's denial is answered from the cache")
	assert.InDelta(t, time.Hour.Seconds(), d.RetryAfter.Seconds(), 60)

	d, err = b.Allow(ctx, "client")
	require.NoError(t, err)
	assert.True(t, d.Blocked, "the other instance sees the block")
	assert.InDelta(t, time.Hour.Seconds(), d.RetryAfter.Seconds(), 60)
	p, err := b.Peek(ctx, "client")
	require.NoError(t, err)
	assert.True(t, p.Blocked, "a peek reports it")

	bk, err := sa.BlockKey(core.TakeRequest{Key: "client", Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(1)}})
	require.NoError(t, err)
	ttl, err := client.PTTL(ctx, bk).Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), 60, "the block's key lives until the block's end")

	heardBefore := sb.FollowStats().Announcements
	require.NoError(t, a.Reset(ctx, "client"))
	heard(t, sb, heardBefore+1)
	d, err = b.Allow(ctx, "client")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "the reset lifted the block on the other instance")
	exists, err := client.Exists(ctx, bk).Result()
	require.NoError(t, err)
	assert.Zero(t, exists, "the reset deleted the block's key")
}
