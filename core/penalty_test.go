package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestWithBlockForRejectsBadDurations(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	for _, d := range []time.Duration{-time.Second, 0, core.MaxPeriod + time.Microsecond, time.Second + time.Nanosecond} {
		_, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5), core.WithBlockFor(d))
		expect.ErrorIs(t, err, core.ErrInvalidOption, d)
	}
	l, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5), core.WithBlockFor(core.MaxPeriod))
	must.NoError(t, err)
	expect.Equal(t, core.MaxPeriod, l.BlockFor())
	// A hand-built request with a bad BlockFor is an error, not a block.
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(5)}, Cost: 1, Now: time.Now(), BlockFor: -time.Second}
	_, err = st.Take(context.Background(), req)
	expect.ErrorIs(t, err, core.ErrInvalidOption)
}

// TestPenaltyBox drives each algorithm through a block on the memory store:
// the denial that starts it, requests and peeks during it (refused, spending
// nothing), its end, and a reset that lifts it.
func TestPenaltyBox(t *testing.T) {
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st, err := memory.New(memory.WithSweepInterval(0))
			must.NoError(t, err)
			clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
			l, err := core.NewLimiter(st, alg, core.PerSecond(2), core.WithClock(clk), core.WithBlockFor(time.Minute))
			must.NoError(t, err)
			for range 2 {
				d, err := l.Allow(ctx, "k")
				must.NoError(t, err)
				must.True(t, d.Allowed)
				expect.False(t, d.BlockStarted)
			}
			d, err := l.Allow(ctx, "k")
			must.NoError(t, err)
			expect.False(t, d.Allowed)
			expect.False(t, d.Blocked, "the tripping denial is a denial, not a block")
			expect.True(t, d.BlockStarted)
			expect.Equal(t, time.Minute, d.RetryAfter)

			clk.Advance(10 * time.Second) // the limit alone would admit again
			d, err = l.Allow(ctx, "k")
			must.NoError(t, err)
			expect.False(t, d.Allowed)
			expect.True(t, d.Blocked)
			expect.Equal(t, 50*time.Second, d.RetryAfter)
			expect.Equal(t, int64(0), d.Remaining)
			p, err := l.Peek(ctx, "k")
			must.NoError(t, err)
			expect.True(t, p.Blocked, "a peek reports the block")
			expect.Equal(t, 50*time.Second, p.RetryAfter)

			clk.Advance(50 * time.Second) // the block ends; nothing was spent during it
			for range 2 {
				d, err = l.Allow(ctx, "k")
				must.NoError(t, err)
				expect.True(t, d.Allowed, "a blocked request spends nothing")
			}
			d, err = l.Allow(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.BlockStarted, "a second denial starts a second block")
			must.NoError(t, l.Reset(ctx, "k"))
			d, err = l.Allow(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.Allowed, "a reset lifts the block")
		})
	}
}

func TestPenaltyBoxExceedsAndRefund(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
	l, err := core.NewLimiter(st, core.TokenBucket, core.PerMinute(3), core.WithClock(clk), core.WithBlockFor(time.Hour))
	must.NoError(t, err)
	d, err := l.AllowN(ctx, "k", 4)
	must.NoError(t, err)
	expect.True(t, d.Exceeds)
	expect.False(t, d.BlockStarted, "a cost above the capacity starts no block")
	a, err := l.AllowN(ctx, "k", 3)
	must.NoError(t, err)
	must.True(t, a.Allowed)
	d, err = l.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.BlockStarted)
	expect.Equal(t, time.Hour, d.RetryAfter)
	r, err := l.Refund(ctx, "k", 3, a)
	must.NoError(t, err)
	expect.True(t, r.Blocked, "a refund during a block reports it")
	clk.Advance(time.Hour)
	d, err = l.AllowN(ctx, "k", 3)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the refund gave its cost back")
}

func TestPenaltyBoxClockStepsBack(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	start := time.Unix(1_767_225_600, 0)
	clk := core.NewManualClock(start)
	l, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1), core.WithClock(clk), core.WithBlockFor(time.Minute))
	must.NoError(t, err)
	_, err = l.Allow(ctx, "k")
	must.NoError(t, err)
	d, err := l.Allow(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.BlockStarted)
	clk.Set(start.Add(-time.Hour))
	d, err = l.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.Blocked)
	expect.Equal(t, time.Minute, d.RetryAfter, "a step back never lengthens a block")
}

func TestPenaltyBoxTiersKeepTheirOwnBlocks(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
	l, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(1), core.WithClock(clk), core.WithBlockFor(time.Hour))
	must.NoError(t, err)
	paid, err := l.Tier("paid", core.PerMinute(1))
	must.NoError(t, err)
	expect.Equal(t, time.Hour, paid.BlockFor())
	for range 2 {
		_, err = paid.Allow(ctx, "k")
		must.NoError(t, err)
	}
	d, err := paid.Peek(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.Blocked)
	d, err = l.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the tier's block is the tier's")
}

// A block shorter than the quota's own wait: the denial that starts it and
// the requests it refuses are told when the quota admits them (the window's
// end), not when the block ends; once the block is over, the quota still
// refuses until then.
func TestPenaltyShorterThanTheQuotasWait(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	st, err := memory.New(memory.WithClock(clk))
	must.NoError(t, err)
	defer st.Close()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerHour(2), core.WithClock(clk), core.WithBlockFor(time.Minute))
	must.NoError(t, err)
	ctx := context.Background()
	for range 2 {
		d, err := lim.Allow(ctx, "k")
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
	d, err := lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.BlockStarted)
	expect.Equal(t, time.Hour, d.RetryAfter, "the window's end, not the block's")
	clk.Advance(10 * time.Second)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.True(t, d.Blocked)
	expect.Equal(t, time.Hour-10*time.Second, d.RetryAfter)
	expect.Equal(t, time.Hour-10*time.Second, d.ResetAfter)
	clk.Advance(2 * time.Minute) // the block is over, the quota is not
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	expect.Equal(t, time.Hour-130*time.Second, d.RetryAfter)
}
