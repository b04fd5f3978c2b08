package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// newLimiter returns a limiter of alg and limits over a fresh store, on a
// manual clock standing at Start.
func newLimiter(t *testing.T, newStore NewStore, alg core.Algorithm, limits ...core.Limit) (*core.Limiter, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(Start)
	opts := []core.Option{core.WithClock(clk), core.WithNamespace(t.Name())}
	for _, l := range limits[1:] {
		opts = append(opts, core.WithLimit(l))
	}
	lim, err := core.NewLimiter(newStore(t), alg, limits[0], opts...)
	must.NoError(t, err)
	return lim, clk
}

// spend has lim admit key n times, each for cost 1, and fails the test when
// one is denied.
func spend(t *testing.T, lim *core.Limiter, key string, n int) core.Decision {
	t.Helper()
	var d core.Decision
	for i := range n {
		var err error
		d, err = lim.Allow(context.Background(), key)
		must.NoError(t, err)
		must.True(t, d.Allowed, "request %d of %d", i+1, n)
	}
	return d
}

// peekRemaining is what key may still spend under lim.
func peekRemaining(t *testing.T, lim *core.Limiter, key string) int64 {
	t.Helper()
	d, err := lim.Peek(context.Background(), key)
	must.NoError(t, err)
	return d.Remaining
}

// RunLimiter drives a core.Limiter over the store: Peek changes nothing,
// Reset forgets a key (when the store is a core.Resetter), and two tiers of
// one limiter count a key apart.
func RunLimiter(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String()+"/peek", func(t *testing.T) {
			lim, clk := newLimiter(t, newStore, alg, core.PerMinute(3))
			expect.Equal(t, int64(3), peekRemaining(t, lim, "k"), "a new key")
			spend(t, lim, "k", 2)
			for range 3 {
				expect.Equal(t, int64(1), peekRemaining(t, lim, "k"), "a peek spends nothing")
			}
			clk.Advance(time.Second)
			spend(t, lim, "k", 1)
		})
		t.Run(alg.String()+"/reset", func(t *testing.T) {
			lim, _ := newLimiter(t, newStore, alg, core.PerMinute(2), core.PerHour(5).Named("hour"))
			ctx := context.Background()
			if _, ok := lim.Store().(core.Resetter); !ok {
				must.ErrorIs(t, lim.Reset(ctx, "k"), core.ErrUnsupported)
				return
			}
			spend(t, lim, "k", 2)
			spend(t, lim, "other", 1)
			d, err := lim.Allow(ctx, "k")
			must.NoError(t, err)
			must.False(t, d.Allowed)
			must.NoError(t, lim.Reset(ctx, "k"))
			expect.Equal(t, int64(2), peekRemaining(t, lim, "k"), "the key starts fresh under every limit")
			expect.Equal(t, int64(1), peekRemaining(t, lim, "other"), "other keys keep their state")
			expect.NoError(t, lim.Reset(ctx, "never seen"), "resetting an unknown key is not an error")
		})
		t.Run(alg.String()+"/tiers", func(t *testing.T) {
			base, _ := newLimiter(t, newStore, alg, core.PerMinute(2))
			free, err := base.Tier("free", core.PerMinute(1))
			must.NoError(t, err)
			paid, err := base.Tier("paid", core.PerMinute(3), core.PerHour(10))
			must.NoError(t, err)
			spend(t, free, "user", 1)
			spend(t, paid, "user", 2)
			expect.Equal(t, int64(0), peekRemaining(t, free, "user"), "free")
			expect.Equal(t, int64(1), peekRemaining(t, paid, "user"), "paid counts apart from free")
			expect.Equal(t, int64(2), peekRemaining(t, base, "user"), "the base limiter counts apart from both")
			if _, ok := base.Store().(core.Resetter); ok {
				must.NoError(t, free.Reset(context.Background(), "user"))
				expect.Equal(t, int64(1), peekRemaining(t, free, "user"), "free after its reset")
				expect.Equal(t, int64(1), peekRemaining(t, paid, "user"), "a reset of free leaves paid alone")
			}
		})
	}
}
