package storetest

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// inflightLease is the lease the in-flight sequences use.
const inflightLease = 30 * time.Second

// RunInFlight checks a store's in-flight leases (core.InFlightStore): the same
// scripted acquisitions and releases demand identical decisions on every
// store; bad limits are refused; an abandoned lease (a crashed instance's)
// comes back once its deadline passes on a store whose leases have one; and
// under 64 goroutines on each of 4 limiters sharing the store, never more
// than N requests of a key run at once. A store that is not an
// InFlightStore skips it: the interface is optional.
func RunInFlight(t *testing.T, newStore NewStore) {
	if _, ok := newStore(t).(core.InFlightStore); !ok {
		t.Skip("the store is not a core.InFlightStore")
	}
	t.Run("Scripted", func(t *testing.T) { runInFlightScripted(t, newStore) })
	t.Run("BadInput", func(t *testing.T) { runInFlightBadInput(t, newStore) })
	t.Run("Abandoned", func(t *testing.T) { runInFlightAbandoned(t, newStore) })
	t.Run("Renewed", func(t *testing.T) { runInFlightRenewed(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { runInFlightConcurrent(t, newStore) })
}

// inflightLimiters returns n limiters of slots in-flight slots over one fresh
// store, each its own instance (its own renewer), on one manual clock.
func inflightLimiters(t *testing.T, newStore NewStore, n int, slots int64) ([]*core.Limiter, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(Start)
	st := newStore(t)
	lims := make([]*core.Limiter, n)
	for i := range lims {
		var err error
		lims[i], err = core.NewLimiter(st, core.GCRA, core.PerSecond(1000), core.WithClock(clk),
			core.WithNamespace(t.Name()), core.WithInFlight(core.InFlight{Slots: slots, Lease: inflightLease}))
		must.NoError(t, err)
	}
	return lims, clk
}

// acquire has lim take a slot of key and checks the decision's figures.
func acquire(t *testing.T, lim *core.Limiter, key string, allowed bool, held int64) (core.Slot, core.LeaseDecision) {
	t.Helper()
	s, d, err := lim.Acquire(context.Background(), key)
	must.NoError(t, err)
	must.Equal(t, allowed, d.Allowed, "allowed")
	expect.Equal(t, held, d.Held, "held")
	expect.Equal(t, lim.InFlight(), d.InFlight)
	if allowed {
		expect.Zero(t, d.RetryAfter)
		expect.True(t, s.Held())
	} else {
		expect.Equal(t, core.InFlightRetryAfter, d.RetryAfter)
		expect.False(t, s.Held())
	}
	return s, d
}

func runInFlightScripted(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	for _, key := range scriptKeys {
		name := key
		if len(name) > 16 {
			name = "long"
		}
		t.Run(name, func(t *testing.T) {
			lims, _ := inflightLimiters(t, newStore, 2, 3)
			a, b := lims[0], lims[1]
			s1, _ := acquire(t, a, key, true, 1)
			s2, _ := acquire(t, b, key, true, 2)
			s3, _ := acquire(t, a, key, true, 3)
			_, _ = acquire(t, b, key, false, 3)
			if _, ok := a.Store().(core.SlotPeeker); ok {
				held, err := b.PeekSlots(ctx, key)
				must.NoError(t, err)
				expect.Equal(t, int64(3), held, "a peek counts every instance's slots")
			}
			_, _ = acquire(t, a, key+"-other", true, 1)
			must.NoError(t, s2.Release(ctx))
			expect.ErrorIs(t, s2.Release(ctx), core.ErrLeaseReleased)
			s4, _ := acquire(t, a, key, true, 3)
			_, _ = acquire(t, b, key, false, 3)
			for _, s := range []core.Slot{s1, s3, s4} {
				must.NoError(t, s.Release(ctx))
			}
			s5, _ := acquire(t, b, key, true, 1)
			must.NoError(t, s5.Release(ctx))
			expect.Zero(t, a.SlotsHeld()-1, "a holds the other key's slot")
		})
	}
}

func runInFlightBadInput(t *testing.T, newStore NewStore) {
	st := newStore(t).(core.InFlightStore)
	ctx := context.Background()
	for _, f := range []core.InFlight{{Slots: 0, Lease: time.Second}, core.Concurrent(100_000), {Slots: 3}, {Slots: 3, Lease: -time.Second}} {
		d, err := st.Acquire(ctx, core.LeaseRequest{Key: "k", InFlight: f, Now: Start})
		expect.ErrorIs(t, err, core.ErrInvalidLimit, "%+v", f)
		expect.False(t, d.Allowed)
	}
	_, err := st.Acquire(ctx, core.LeaseRequest{Key: "k", Namespace: strings.Repeat("n", 257), InFlight: core.Concurrent(3), Now: Start})
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Error(t, st.Release(ctx, core.Lease{}), "a lease the store never granted")
	expect.Error(t, st.Renew(ctx, Start, make([]core.Lease, 2), make([]bool, 1)))
}

// A crashed instance never releases its slots: on a store whose leases have
// a deadline they come back once it passes; on one whose slots live and die
// with the process (the memory store) they stay held, as the process that
// holds them is alive. Either way a late release counts nothing twice.
func runInFlightAbandoned(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	lims, clk := inflightLimiters(t, newStore, 2, 2)
	crashed, alive := lims[0], lims[1]
	s1, _ := acquire(t, crashed, "k", true, 1)
	s2, _ := acquire(t, crashed, "k", true, 2)
	_, _ = acquire(t, alive, "k", false, 2)
	clk.Advance(inflightLease - time.Millisecond)
	_, _ = acquire(t, alive, "k", false, 2)
	clk.Advance(time.Millisecond)
	_, d, err := alive.Acquire(ctx, "k")
	must.NoError(t, err)
	deadlines := d.Allowed
	if !deadlines {
		expect.Equal(t, int64(2), d.Held, "slots without a deadline stay held")
		must.NoError(t, s1.Release(ctx))
		must.NoError(t, s2.Release(ctx))
		_, _ = acquire(t, alive, "k", true, 1)
		return
	}
	expect.Equal(t, int64(1), d.Held, "both abandoned slots came back")
	if _, ok := alive.Store().(core.SlotPeeker); ok {
		held, err := alive.PeekSlots(ctx, "k")
		must.NoError(t, err)
		expect.Equal(t, int64(1), held, "expired leases are not counted")
	}
	_, _ = acquire(t, alive, "k", true, 2)
	_, _ = acquire(t, alive, "k", false, 2)
	renewed, expired, err := crashed.RenewSlots(ctx)
	must.NoError(t, err)
	expect.Equal(t, 0, renewed)
	expect.Equal(t, 2, expired)
	expect.Equal(t, int64(2), crashed.SlotsExpired())
	expect.ErrorIs(t, s1.Release(ctx), core.ErrLeaseExpired)
	expect.ErrorIs(t, s2.Release(ctx), core.ErrLeaseExpired)
	_, _ = acquire(t, alive, "k", false, 2)
}

// A lease renewed in time outlives its first deadline.
func runInFlightRenewed(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	lims, clk := inflightLimiters(t, newStore, 2, 1)
	holder, other := lims[0], lims[1]
	s, d := acquire(t, holder, "k", true, 1)
	want := 1 // a lease without a deadline needs no renewal
	if d.Lease.Deadline.IsZero() {
		want = 0
	}
	for range 3 {
		clk.Advance(inflightLease / 2)
		renewed, expired, err := holder.RenewSlots(ctx)
		must.NoError(t, err)
		expect.Equal(t, want, renewed)
		expect.Zero(t, expired)
		_, _ = acquire(t, other, "k", false, 1)
	}
	must.NoError(t, s.Release(ctx))
	_, _ = acquire(t, other, "k", true, 1)
}

// Never more than N running: 64 goroutines on each of 4 limiters sharing one
// store, each counting itself in a shared counter of running requests while
// it holds a slot.
func runInFlightConcurrent(t *testing.T, newStore NewStore) {
	const slots, instances, goroutines, rounds = 5, 4, 64, 4
	lims, _ := inflightLimiters(t, newStore, instances, slots)
	ctx := context.Background()
	var running, most, admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range instances * goroutines {
		lim := lims[i%instances]
		wg.Go(func() {
			for range rounds {
				s, d, err := lim.Acquire(ctx, "hot")
				if !expect.NoError(t, err) || !d.Allowed {
					continue
				}
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				admitted.Add(1)
				runtime.Gosched()
				running.Add(-1)
				expect.NoError(t, s.Release(ctx))
			}
		})
	}
	wg.Wait()
	expect.LessOrEqual(t, most.Load(), int64(slots), "never more than N running")
	expect.Positive(t, admitted.Load())
	for _, lim := range lims {
		expect.Zero(t, lim.SlotsHeld())
	}
	s, _ := acquire(t, lims[0], "hot", true, 1)
	must.NoError(t, s.Release(ctx))
}
