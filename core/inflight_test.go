package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestInFlightValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    core.InFlight
		want string
	}{
		{"no slots", core.InFlight{Slots: 0, Lease: time.Second}, "at least 1"},
		{"negative slots", core.InFlight{Slots: -3, Lease: time.Second}, "at least 1"},
		{"100,000 slots at once", core.Concurrent(100_000), "above the maximum of 10000"},
		{"lease 0", core.InFlight{Slots: 2}, "must be positive"},
		{"negative lease", core.InFlight{Slots: 2, Lease: -time.Second}, "must be positive"},
		{"lease too short", core.InFlight{Slots: 2, Lease: time.Millisecond}, "outside"},
		{"lease too long", core.InFlight{Slots: 2, Lease: 2 * time.Hour}, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Validate()
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.ErrorContains(t, err, tc.want)
			st := newMemory(t)
			_, err = core.NewLimiter(st, core.GCRA, core.PerSecond(10), core.WithInFlight(tc.f))
			expect.ErrorIs(t, err, core.ErrInvalidLimit)
		})
	}
	must.NoError(t, core.Concurrent(core.MaxInFlightSlots).Validate())
	expect.Equal(t, "5 concurrent", core.Concurrent(5).String())
	expect.True(t, core.InFlight{}.IsZero())
	expect.False(t, core.Concurrent(1).IsZero())
}

func newMemory(t *testing.T) *memory.Store {
	t.Helper()
	st, err := memory.New()
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// rateOnly is a store that keeps no in-flight leases.
type rateOnly struct{ core.Store }

func TestInFlightNeedsAStoreThatLeases(t *testing.T) {
	_, err := core.NewLimiter(rateOnly{newMemory(t)}, core.GCRA, core.PerSecond(10), core.WithInFlight(core.Concurrent(2)))
	must.ErrorIs(t, err, core.ErrUnsupported)
	lim, err := core.NewLimiter(newMemory(t), core.GCRA, core.PerSecond(10))
	must.NoError(t, err)
	_, _, err = lim.Acquire(context.Background(), "k")
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = lim.PeekSlots(context.Background(), "k")
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Zero(t, lim.InFlight())
	expect.Zero(t, lim.SlotsHeld())
	renewed, expired, err := lim.RenewSlots(context.Background())
	expect.NoError(t, err)
	expect.Zero(t, renewed+expired)
}

func TestAcquireRelease(t *testing.T) {
	ctx := context.Background()
	lim, err := core.NewLimiter(newMemory(t), core.GCRA, core.PerSecond(10), core.WithInFlight(core.Concurrent(2)))
	must.NoError(t, err)
	expect.Equal(t, core.Concurrent(2), lim.InFlight())
	a, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	expect.Equal(t, int64(1), d.Held)
	b, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	expect.Equal(t, int64(2), d.Held)
	expect.Equal(t, int64(2), lim.SlotsHeld())
	peeked, err := lim.PeekSlots(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, int64(2), peeked)

	refused, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.False(t, d.Allowed)
	expect.Equal(t, core.InFlightRetryAfter, d.RetryAfter)
	expect.Equal(t, int64(2), d.Held)
	expect.False(t, refused.Held())
	expect.NoError(t, refused.Release(ctx)) // the zero Slot: nothing

	_, d, err = lim.Acquire(ctx, "other key")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "keys are apart")

	must.True(t, a.Held())
	must.NoError(t, a.Release(ctx))
	expect.False(t, a.Held())
	expect.ErrorIs(t, a.Release(ctx), core.ErrLeaseReleased)
	c, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	// a's state may serve c now: a stale release must not free c's slot.
	expect.ErrorIs(t, a.Release(ctx), core.ErrLeaseReleased)
	_, d, err = lim.Acquire(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "a second release of a gave back nothing")
	must.NoError(t, b.Release(ctx))
	must.NoError(t, c.Release(ctx))
	expect.Equal(t, int64(1), lim.SlotsHeld(), "other key's")
}

// Tiers share their limiter's in-flight limit and slots.
func TestTierSharesSlots(t *testing.T) {
	ctx := context.Background()
	lim, err := core.NewLimiter(newMemory(t), core.GCRA, core.PerSecond(10), core.WithInFlight(core.Concurrent(1)))
	must.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerSecond(100))
	must.NoError(t, err)
	s, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	_, d, err = paid.Acquire(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	must.NoError(t, s.Release(ctx))
}

// Never more than N running, from many goroutines at once.
func TestAcquireExactUnderContention(t *testing.T) {
	const n, workers, rounds = 3, 32, 200
	ctx := context.Background()
	lim, err := core.NewLimiter(newMemory(t), core.GCRA, core.PerSecond(10), core.WithInFlight(core.Concurrent(n)))
	must.NoError(t, err)
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				s, d, err := lim.Acquire(ctx, "k")
				if err != nil || !d.Allowed {
					continue
				}
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				mu.Lock()
				running--
				mu.Unlock()
				_ = s.Release(ctx)
			}
		})
	}
	wg.Wait()
	expect.LessOrEqual(t, most, n)
	expect.Positive(t, most)
	expect.Zero(t, lim.SlotsHeld())
}
