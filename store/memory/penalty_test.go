package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A running block outlives a sweep that the key's recovered limits alone
// would let drop it, and its entry goes once the block has ended.
func TestPenaltyOutlivesSweep(t *testing.T) {
	ctx := context.Background()
	clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
	st := newStore(t, memory.WithClock(clk), memory.WithSweepInterval(0))
	for _, alg := range core.Algorithms() {
		l, err := core.NewLimiter(st, alg, core.PerSecond(1), core.WithClock(clk), core.WithBlockFor(time.Hour), core.WithNamespace(alg.String()))
		must.NoError(t, err)
		_, err = l.Allow(ctx, "k")
		must.NoError(t, err)
		d, err := l.Allow(ctx, "k")
		must.NoError(t, err)
		must.True(t, d.BlockStarted, alg)
	}
	clk.Advance(time.Minute)
	// The store's sweep runs at the latest request time it saw: a request
	// of another key moves it on.
	other, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1), core.WithClock(clk), core.WithNamespace("other"))
	must.NoError(t, err)
	_, err = other.Allow(ctx, "x")
	must.NoError(t, err)
	st.Sweep()
	expect.Equal(t, len(core.Algorithms())+1, st.Len(), "the blocked keys are kept")
	for _, alg := range core.Algorithms() {
		l, err := core.NewLimiter(st, alg, core.PerSecond(1), core.WithClock(clk), core.WithBlockFor(time.Hour), core.WithNamespace(alg.String()))
		must.NoError(t, err)
		d, err := l.Allow(ctx, "k")
		must.NoError(t, err)
		expect.True(t, d.Blocked, alg)
		expect.Equal(t, 59*time.Minute, d.RetryAfter, alg)
	}
	clk.Advance(time.Hour)
	_, err = other.Allow(ctx, "y")
	must.NoError(t, err)
	st.Sweep()
	expect.Equal(t, 1, st.Len(), "ended blocks go with their recovered keys")
}

// A limiter given a penalty box (a rules reload adding block_for) carries on
// from what a key used under the same limits without one, and back: neither
// edit mints a fresh quota.
func TestPenaltyAddedOrRemovedMintsNothing(t *testing.T) {
	ctx := context.Background()
	clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
	st := newStore(t, memory.WithSweepInterval(0))
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			plain, err := core.NewLimiter(st, alg, core.PerMinute(2), core.WithClock(clk), core.WithNamespace("edit"))
			must.NoError(t, err)
			boxed, err := core.NewLimiter(st, alg, core.PerMinute(2), core.WithClock(clk), core.WithNamespace("edit"), core.WithBlockFor(time.Hour))
			must.NoError(t, err)
			key := "k-" + alg.String()
			for range 2 {
				d, err := plain.Allow(ctx, key)
				must.NoError(t, err)
				must.True(t, d.Allowed)
			}
			d, err := boxed.Allow(ctx, key)
			must.NoError(t, err)
			expect.False(t, d.Allowed, "the spent quota carries over")
			expect.True(t, d.BlockStarted, "and the denial starts a block")
			expect.Equal(t, time.Hour, d.RetryAfter)
			d, err = plain.Allow(ctx, key)
			must.NoError(t, err)
			expect.False(t, d.Allowed, "dropping the block mints nothing")
		})
	}
}

// Bad input reaches the memory store from hand-built requests: a clear
// error, no state written.
func TestPenaltyBadBlockFor(t *testing.T) {
	st := newStore(t, memory.WithSweepInterval(0))
	req := core.TakeRequest{Key: "k", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerMinute(1)}, Cost: 1, Now: time.Now(), BlockFor: -time.Hour}
	var err error
	must.NotPanics(t, func() { _, err = st.Take(context.Background(), req) })
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Equal(t, 0, st.Len())
}
