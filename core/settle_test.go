package core_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// settleLimiter is a limiter of alg under l with debt bound debt on a
// fresh memory store, on a manual clock.
func settleLimiter(t *testing.T, alg core.Algorithm, l core.Limit, debt int64) (*core.Limiter, *core.ManualClock) {
	t.Helper()
	st, err := memory.New()
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Unix(1_800_000_000, 0))
	lim, err := core.NewLimiter(st, alg, l, core.WithClock(clk), core.WithDebt(debt))
	must.NoError(t, err)
	return lim, clk
}

func TestSettleChargesIntoDebtThenPaysBack(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket} {
		t.Run(alg.String(), func(t *testing.T) {
			lim, clk := settleLimiter(t, alg, core.PerSecond(10), 5)
			d, err := lim.AllowN(ctx, "k", 1)
			must.NoError(t, err)
			must.True(t, d.Allowed)
			// The real cost is 13: 12 more than reserved, 10 to empty and 2 of debt.
			after, err := lim.Settle(ctx, "k", 13, &d)
			must.NoError(t, err)
			expect.False(t, after.Allowed, "a key in debt is denied")
			expect.Equal(t, int64(3), after.Debt)
			expect.Equal(t, int64(0), after.Remaining)
			// A peek's: three intervals of debt.
			expect.Equal(t, 300*time.Millisecond, after.RetryAfter)
			clk.Advance(399 * time.Millisecond)
			d2, err := lim.Allow(ctx, "k")
			must.NoError(t, err)
			expect.False(t, d2.Allowed)
			expect.Equal(t, time.Millisecond, d2.RetryAfter, "the next request sees the debt in its Retry-After")
			clk.Advance(time.Millisecond)
			d3, err := lim.Allow(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d3.Allowed)
		})
	}
}

func TestSettleDebtBound(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			lim, _ := settleLimiter(t, alg, core.PerMinute(10), 4)
			d, err := lim.AllowN(ctx, "k", 1)
			must.NoError(t, err)
			after, err := lim.Settle(ctx, "k", math.MaxInt64, &d)
			must.NoError(t, err, "MaxInt64 is charged up to the bound, never overflows")
			expect.Equal(t, int64(4), after.Debt)
			expect.False(t, after.Allowed)
			d2, err := lim.AllowN(ctx, "k", 1)
			must.NoError(t, err)
			expect.False(t, d2.Allowed)
			expect.Equal(t, int64(4), d2.Debt)
		})
	}
}

func TestSettleWindowsCountAboveTheLimit(t *testing.T) {
	ctx := context.Background()
	lim, clk := settleLimiter(t, core.FixedWindow, core.PerMinute(10), 10)
	clk.Set(time.Unix(1_800_000_000-1_800_000_000%60, 0)) // a window's start
	d, err := lim.AllowN(ctx, "k", 2)
	must.NoError(t, err)
	after, err := lim.Settle(ctx, "k", 15, &d)
	must.NoError(t, err)
	expect.Equal(t, int64(5), after.Debt)
	expect.Equal(t, time.Minute, after.RetryAfter, "the fixed window's debt is owed until its window ends")
	clk.Advance(time.Minute)
	d2, err := lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d2.Allowed)
	expect.Equal(t, int64(0), d2.Debt)
}

func TestSettleGivesBackTheDifference(t *testing.T) {
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			lim, _ := settleLimiter(t, alg, core.PerMinute(10), 0)
			d, err := lim.AllowN(ctx, "k", 8)
			must.NoError(t, err)
			expect.Equal(t, int64(2), d.Remaining)
			after, err := lim.Settle(ctx, "k", 3, &d)
			must.NoError(t, err)
			expect.Equal(t, int64(7), after.Remaining)
			// Never minted: settling to 0 gives back at most the reservation.
			d2, err := lim.AllowN(ctx, "k", 1)
			must.NoError(t, err)
			after2, err := lim.Settle(ctx, "k", 0, &d2)
			must.NoError(t, err)
			expect.Equal(t, int64(7), after2.Remaining)
		})
	}
}

func TestSettleBadInput(t *testing.T) {
	ctx := context.Background()
	lim, _ := settleLimiter(t, core.GCRA, core.PerMinute(10), 2)
	d, err := lim.AllowN(ctx, "k", 1)
	must.NoError(t, err)
	_, err = lim.Settle(ctx, "k", -1, &d)
	expect.ErrorIs(t, err, core.ErrInvalidCost)
	_, err = lim.Settle(ctx, "k", 1, &core.Decision{Allowed: true})
	expect.ErrorIs(t, err, core.ErrNotReserved, "a reservation that never happened")
	_, err = lim.Settle(ctx, "k", 1, nil)
	expect.ErrorIs(t, err, core.ErrNotReserved)
	_, err = lim.Settle(ctx, "k", 5, &d)
	must.NoError(t, err)
	before, err := lim.Peek(ctx, "k")
	must.NoError(t, err)
	_, err = lim.Settle(ctx, "k", 9, &d)
	expect.ErrorIs(t, err, core.ErrNotReserved, "a second settle")
	_, err = lim.Settle(ctx, "k", 0, &d)
	expect.ErrorIs(t, err, core.ErrNotReserved, "a second settle gives nothing back either")
	now, err := lim.Peek(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, before.Remaining, now.Remaining, "never counted twice")
	expect.Equal(t, before.ResetAfter, now.ResetAfter)
	denied := core.Decision{}
	for denied.Allowed || denied == (core.Decision{}) {
		denied, err = lim.AllowN(ctx, "k", 10)
		must.NoError(t, err)
	}
	_, err = lim.Settle(ctx, "k", 1, &denied)
	expect.ErrorIs(t, err, core.ErrNotReserved, "a denied request reserved nothing")
}

func TestWithDebtValidation(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	defer st.Close()
	cases := []struct {
		name string
		alg  core.Algorithm
		debt int64
	}{
		{"negative", core.GCRA, -1},
		{"above the burst", core.GCRA, 11},
		{"above the rate", core.FixedWindow, 11},
		{"sliding log", core.SlidingLog, 1},
		{"MaxInt64", core.SlidingWindow, math.MaxInt64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := core.NewLimiter(st, c.alg, core.PerSecond(10), core.WithDebt(c.debt))
			expect.ErrorIs(t, err, core.ErrInvalidOption)
		})
	}
	lim, err := core.NewLimiter(st, core.SlidingLog, core.PerSecond(10))
	must.NoError(t, err)
	d, err := lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	_, err = lim.Settle(context.Background(), "k", 2, &d)
	expect.ErrorIs(t, err, core.ErrUnsupported, "the sliding log refuses a charge")
}

func TestChargeOnStatesMatchesWords(t *testing.T) {
	// A charge through Decide on a State and through AdvanceWord on a word
	// leave the same meter.
	l := core.PerSecond(10)
	now := hms(1, 0, 0)
	for _, start := range []int64{0, now - us(time.Second), now + us(500*time.Millisecond), now + us(1400*time.Millisecond)} {
		for _, n := range []int64{1, 7, 12, math.MaxInt64} {
			req := core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{l}, Cost: n, Charge: true, MaxDebt: 5, Now: time.UnixMicro(now)}
			st := []core.State{{T: start}}
			var d core.Decision
			must.NoError(t, req.Decide(&d, st, now))
			expect.Equal(t, st[0].T, req.AdvanceWord(start, now))
			expect.LessOrEqual(t, st[0].T, now+us(1500*time.Millisecond), "never beyond the bound")
		}
	}
}

// A clock that steps back leaves a debt at its bound, never more: the
// state read as ahead of any real history is rebased to the horizon (tau
// plus the debt's intervals), as a meter without a debt is to an empty one.
func TestSettleDebtAcrossAClockStepBack(t *testing.T) {
	ctx := context.Background()
	lim, clk := settleLimiter(t, core.GCRA, core.PerSecond(10), 5)
	d, err := lim.AllowN(ctx, "k", 1)
	must.NoError(t, err)
	_, err = lim.Settle(ctx, "k", 100, &d)
	must.NoError(t, err)
	clk.Advance(-time.Hour)
	peek, err := lim.Peek(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, int64(5), peek.Debt, "the bound, not an hour's worth")
	expect.Equal(t, 500*time.Millisecond, peek.RetryAfter)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	clk.Advance(600 * time.Millisecond)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the key recovers at its pace from the new now")
}
