package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// What the scripts cannot decide fails when the limiter (or a tier) is
// built, with no call to Redis, never at request time where the policy
// would fail open on every request: a debt bound beside a penalty box or a
// calendar limit, and a debt bound under the sliding log. Each combination
// the scripts do decide is built and decides.
func TestLimiterRefusesWhatTheScriptsCannotDecide(t *testing.T) {
	srv := redistest.Start(t)
	st, err := New(newClient(t, srv.Addr()), luascript.WithPrefix(testPrefix()))
	require.NoError(t, err)
	before := evalCalls(t, srv.Addr())
	for _, c := range []struct {
		name  string
		alg   core.Algorithm
		limit core.Limit
		opts  []core.Option
	}{
		{"debt and penalty box", core.GCRA, core.PerMinute(10), []core.Option{core.WithDebt(5), core.WithBlockFor(time.Minute)}},
		{"debt and calendar", core.FixedWindow, core.Monthly(100), []core.Option{core.WithDebt(5)}},
		{"debt and a calendar limit beside a plain one", core.SlidingWindow, core.PerMinute(10), []core.Option{core.WithDebt(5), core.WithLimit(core.Monthly(100))}},
	} {
		_, err := core.NewLimiter(st, c.alg, c.limit, c.opts...)
		assert.ErrorIs(t, err, core.ErrUnsupported, c.name)
	}
	assert.Equal(t, before, evalCalls(t, srv.Addr()), "the checks send nothing to Redis")

	debt, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(10), core.WithDebt(5))
	require.NoError(t, err)
	_, err = debt.Tier("monthly", core.Monthly(100))
	assert.ErrorIs(t, err, core.ErrUnsupported, "a tier of a debt-bound limiter with a calendar limit")

	ctx := context.Background()
	for _, c := range []struct {
		name  string
		alg   core.Algorithm
		limit core.Limit
		opts  []core.Option
	}{
		{"debt", core.GCRA, core.PerMinute(10), []core.Option{core.WithDebt(5)}},
		{"penalty box", core.GCRA, core.PerMinute(10), []core.Option{core.WithBlockFor(time.Minute)}},
		{"calendar and penalty box", core.FixedWindow, core.Monthly(100), []core.Option{core.WithBlockFor(time.Minute)}},
	} {
		lim, err := core.NewLimiter(st, c.alg, c.limit, c.opts...)
		require.NoError(t, err, c.name)
		d, err := lim.Allow(ctx, "k-"+c.name)
		require.NoError(t, err, c.name)
		assert.True(t, d.Allowed, c.name)
	}
}
