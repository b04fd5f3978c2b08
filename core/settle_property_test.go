package core_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// Random reservations and settles, with costs up to MaxInt64 and a clock
// that jumps both ways, under one limit and two: a key never has more than a
// fresh key's quota, never owes more than the debt bound, and a settle
// never fails but for its documented errors.
func TestSettleProperties(t *testing.T) {
	ctx := context.Background()
	costs := []int64{0, 1, 2, 5, 9, 10, 11, 40, math.MaxInt64 / 2, math.MaxInt64}
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket, core.FixedWindow, core.SlidingWindow} {
		for _, two := range []bool{false, true} {
			st, err := memory.New()
			must.NoError(t, err)
			clk := core.NewManualClock(time.Unix(1_800_000_000, 0))
			opts := []core.Option{core.WithClock(clk), core.WithDebt(7)}
			if two {
				opts = append(opts, core.WithLimit(core.PerMinute(30).Named("minute")))
			}
			lim, err := core.NewLimiter(st, alg, core.PerSecond(10), opts...)
			must.NoError(t, err)
			rng := rand.New(rand.NewPCG(uint64(alg), 7))
			for i := range 2000 {
				clk.Advance(time.Duration(rng.IntN(300)-40) * time.Millisecond)
				d, err := lim.AllowN(ctx, "k", int64(rng.IntN(4)))
				must.NoError(t, err)
				if d.Allowed {
					after, err := lim.Settle(ctx, "k", costs[rng.IntN(len(costs))], &d)
					must.NoError(t, err, "%s step %d", alg, i)
					expect.LessOrEqual(t, after.Debt, int64(7), "%s step %d: the debt bound", alg, i)
					expect.LessOrEqual(t, after.Remaining, alg.Capacity(after.Limit), "%s step %d: nothing minted", alg, i)
				}
				peek, err := lim.Peek(ctx, "k")
				must.NoError(t, err)
				expect.LessOrEqual(t, peek.Debt, int64(7), "%s step %d", alg, i)
				if peek.Debt > 0 {
					expect.False(t, peek.Allowed, "%s step %d: a key in debt is denied", alg, i)
					expect.Greater(t, peek.RetryAfter, time.Duration(0))
				}
			}
			must.NoError(t, st.Close())
		}
	}
}
