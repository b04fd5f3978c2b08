package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RunRefunds drives core.Limiter.Refund over the store for every algorithm:
// a refund gives back what was admitted, under every limit; it is clamped to
// what was admitted and to a fresh key's quota; it gives back nothing once
// the admission's window or refill time has passed; refunds racing with
// spends add up exactly; and a refund of nothing is an error.
func RunRefunds(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String()+"/basic", func(t *testing.T) { refundBasic(t, newStore, alg) })
		t.Run(alg.String()+"/several limits", func(t *testing.T) { refundSeveral(t, newStore, alg) })
		t.Run(alg.String()+"/clamped", func(t *testing.T) { refundClamped(t, newStore, alg) })
		t.Run(alg.String()+"/clamped at a high rate", func(t *testing.T) { refundClampedAtAHighRate(t, newStore, alg) })
		t.Run(alg.String()+"/moved on", func(t *testing.T) { refundMovedOn(t, newStore, alg) })
		t.Run(alg.String()+"/concurrent", func(t *testing.T) { refundConcurrent(t, newStore, alg) })
		t.Run(alg.String()+"/bad input", func(t *testing.T) { refundBadInput(t, newStore, alg) })
	}
}

func refundBasic(t *testing.T, newStore NewStore, alg core.Algorithm) {
	lim, clk := newLimiter(t, newStore, alg, core.PerMinute(3))
	ctx := context.Background()
	last := spend(t, lim, "k", 3)
	clk.Advance(time.Second)
	d, err := lim.Refund(ctx, "k", 1, last)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "a refund replies as a peek")
	expect.Equal(t, int64(1), d.Remaining, "one given back")
	spend(t, lim, "k", 1)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "the refund gave back exactly one")
}

func refundSeveral(t *testing.T, newStore NewStore, alg core.Algorithm) {
	lim, clk := newLimiter(t, newStore, alg, core.PerMinute(2), core.PerHour(3).Named("hour"))
	ctx := context.Background()
	last := spend(t, lim, "k", 2)
	d, err := lim.Allow(ctx, "k")
	must.NoError(t, err)
	must.False(t, d.Allowed, "the minute is spent")
	d, err = lim.Refund(ctx, "k", 1, last)
	must.NoError(t, err)
	expect.Equal(t, int64(1), d.Remaining, "the minute got one back")
	spend(t, lim, "k", 1)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	must.False(t, d.Allowed)
	clk.Advance(2*time.Minute + time.Second)
	d, err = lim.Peek(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, "hour", d.Limit.Name)
	expect.Equal(t, int64(1), d.Remaining, "the hour got one back too: 3 - (3 spent - 1 refunded)")
}

func refundClamped(t *testing.T, newStore NewStore, alg core.Algorithm) {
	lim, _ := newLimiter(t, newStore, alg, core.PerMinute(3))
	ctx := context.Background()
	spend(t, lim, "k", 1)
	second := spend(t, lim, "k", 1)
	d, err := lim.Refund(ctx, "k", 5, second)
	must.NoError(t, err)
	expect.Equal(t, int64(2), d.Remaining, "clamped to the one the decision admitted")
	for range 2 {
		d, err = lim.Refund(ctx, "k", 10, core.Decision{})
		must.NoError(t, err)
		expect.Equal(t, int64(3), d.Remaining, "clamped to a fresh key's quota")
	}
	spend(t, lim, "k", 3)
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "no quota was minted")
}

// refundClampedAtAHighRate is refundClamped at 1,000,000/s, a rate whose
// window counts and meter instants are large: a refund of more than was
// admitted, and refunds with nothing admitted, leave a state the store still
// reads (a count driven below 0 and written back would be refused as
// malformed by the next call).
func refundClampedAtAHighRate(t *testing.T, newStore NewStore, alg core.Algorithm) {
	const rate = 1_000_000
	limit := core.PerSecond(rate)
	if alg == core.SlidingLog {
		limit = core.PerSecond(100_000) // the log's most
	}
	lim, _ := newLimiter(t, newStore, alg, limit)
	ctx := context.Background()
	first := spend(t, lim, "k", 1)
	d, err := lim.Refund(ctx, "k", 5, first)
	must.NoError(t, err)
	expect.Equal(t, limit.Rate, d.Remaining, "clamped to the one the decision admitted")
	for range 2 {
		d, err = lim.Refund(ctx, "k", 10, core.Decision{})
		must.NoError(t, err)
		expect.Equal(t, limit.Rate, d.Remaining, "clamped to a fresh key's quota")
	}
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err, "the state a clamped refund left is read back")
	expect.True(t, d.Allowed)
	expect.Equal(t, limit.Rate-1, d.Remaining, "no quota was minted")
}

func refundMovedOn(t *testing.T, newStore NewStore, alg core.Algorithm) {
	lim, clk := newLimiter(t, newStore, alg, core.PerMinute(3))
	ctx := context.Background()
	old := spend(t, lim, "k", 1)
	clk.Advance(2*time.Minute + time.Second)
	spend(t, lim, "k", 3)
	d, err := lim.Refund(ctx, "k", 1, old)
	must.NoError(t, err)
	expect.Equal(t, int64(0), d.Remaining, "the admission's window or refill time is over: nothing to give back")
	d, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
}

// refundConcurrent has goroutines spend and refund on one key at one instant:
// every refund gives back its admission whole, so the key ends exactly at the
// quota minus what stayed spent, never above a fresh key's.
func refundConcurrent(t *testing.T, newStore NewStore, alg core.Algorithm) {
	const capacity = 10
	lim, _ := newLimiter(t, newStore, alg, core.Every(capacity, 10*time.Second))
	ctx := context.Background()
	var admitted, refunded atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				d, err := lim.Allow(ctx, "hot")
				if !expect.NoError(t, err) || !d.Allowed {
					continue
				}
				admitted.Add(1)
				if (g+i)%2 == 1 {
					continue
				}
				r, err := lim.Refund(ctx, "hot", 1, d)
				if expect.NoError(t, err) {
					refunded.Add(1)
					expect.LessOrEqual(t, r.Remaining, int64(capacity))
				}
			}
		}()
	}
	wg.Wait()
	kept := admitted.Load() - refunded.Load()
	expect.Positive(t, refunded.Load())
	expect.LessOrEqual(t, kept, int64(capacity))
	expect.Equal(t, capacity-kept, peekRemaining(t, lim, "hot"), "admitted %d, refunded %d", admitted.Load(), refunded.Load())
}

func refundBadInput(t *testing.T, newStore NewStore, alg core.Algorithm) {
	lim, _ := newLimiter(t, newStore, alg, core.PerMinute(3))
	ctx := context.Background()
	last := spend(t, lim, "k", 3)
	denied, err := lim.Allow(ctx, "k")
	must.NoError(t, err)
	must.False(t, denied.Allowed)
	cases := []struct {
		name     string
		n        int64
		admitted core.Decision
	}{
		{"zero", 0, last},
		{"negative", -1, last},
		{"most negative", -1 << 63, last},
		{"denied decision", 1, denied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			must.NotPanics(t, func() { _, err = lim.Refund(ctx, "k", c.n, c.admitted) })
			must.ErrorIs(t, err, core.ErrInvalidCost)
			expect.Equal(t, int64(0), peekRemaining(t, lim, "k"), "nothing given back")
		})
	}
}
