package memory_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// An in-flight request allocates nothing on a key the store holds: one
// compare-and-swap to take the slot, one to give it back.
func TestInFlightAllocatesNothing(t *testing.T) {
	st := newStore(t)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1e6), core.WithInFlight(core.Concurrent(4)))
	must.NoError(t, err)
	ctx := context.Background()
	s, _, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.NoError(t, s.Release(ctx))
	allocs := testing.AllocsPerRun(1000, func() {
		s, d, err := lim.Acquire(ctx, "k")
		if err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
		if err := s.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	expect.Zero(t, allocs)
}

// The counters of keys with nothing running are retired by Sweep and by a
// new key finding the table at the bound; a full table of running keys
// refuses new keys.
func TestInFlightBounded(t *testing.T) {
	st := newStore(t, memory.WithMaxKeys(4), memory.WithSweepInterval(0))
	ctx := context.Background()
	req := func(key string) core.LeaseRequest {
		return core.LeaseRequest{Key: key, InFlight: core.Concurrent(1)}
	}
	var leases []core.Lease
	for i := range 4 {
		d, err := st.Acquire(ctx, req(strconv.Itoa(i)))
		must.NoError(t, err)
		must.True(t, d.Allowed)
		leases = append(leases, d.Lease)
	}
	expect.Equal(t, int64(1), peek(t, st, "0"))
	_, err := st.Acquire(ctx, req("new"))
	must.ErrorIs(t, err, core.ErrStoreFull)
	must.NoError(t, st.Release(ctx, leases[0]))
	expect.ErrorIs(t, st.Release(ctx, leases[0]), core.ErrLeaseReleased, "nothing of the key is held")
	d, err := st.Acquire(ctx, req("new"))
	must.NoError(t, err)
	expect.True(t, d.Allowed, "key 0's free counter was retired for it")
	expect.Zero(t, peek(t, st, "0"))
	for _, l := range leases[1:] {
		must.NoError(t, st.Release(ctx, l))
	}
	st.Sweep()
	for i := range 3 {
		d, err := st.Acquire(ctx, req("after"+strconv.Itoa(i)))
		must.NoError(t, err)
		expect.True(t, d.Allowed)
	}
	must.NoError(t, st.Close())
	_, err = st.Acquire(ctx, req("closed"))
	expect.ErrorIs(t, err, core.ErrStoreClosed)
}

func BenchmarkInFlight(b *testing.B) {
	st, err := memory.New()
	must.NoError(b, err)
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1e6), core.WithInFlight(core.Concurrent(core.MaxInFlightSlots)))
	must.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s, _, err := lim.Acquire(ctx, "hot")
			if err != nil {
				b.Fatal(err)
			}
			_ = s.Release(ctx)
		}
	})
}

// peek is st's count of key's slots.
func peek(t *testing.T, st *memory.Store, key string) int64 {
	t.Helper()
	n, err := st.PeekSlots(context.Background(), core.LeaseRequest{Key: key, InFlight: core.Concurrent(1)})
	must.NoError(t, err)
	return n
}
