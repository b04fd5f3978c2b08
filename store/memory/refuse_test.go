package memory_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// A full store under WithRefuseWhenFull refuses new keys with
// core.ErrStoreFull, and the keys it holds keep their exact counts.
func TestRefuseWhenFullKeepsHeldKeys(t *testing.T) {
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		for _, limits := range [][]core.Limit{{core.PerMinute(5)}, {core.PerMinute(5), core.PerHour(50)}} {
			t.Run(fmt.Sprintf("%s/%d", alg, len(limits)), func(t *testing.T) {
				st := newStore(t, memory.WithMaxKeys(4), memory.WithShards(1), memory.WithSweepInterval(0), memory.WithRefuseWhenFull())
				req := func(key string, cost int64) core.TakeRequest {
					return core.TakeRequest{Key: key, Algorithm: alg, Limits: limits, Cost: cost, Now: storetest.Start}
				}
				for i := range 4 {
					for range 2 {
						d, err := st.Take(ctx, req("held"+strconv.Itoa(i), 1))
						must.NoError(t, err)
						must.True(t, d.Allowed)
					}
				}
				for i := range 10 {
					d, err := st.Take(ctx, req("new"+strconv.Itoa(i), 1))
					must.ErrorIs(t, err, core.ErrStoreFull)
					expect.False(t, d.Allowed, "a refused key is not admitted")
				}
				d, err := st.Take(ctx, req("new0", 0))
				must.NoError(t, err, "a peek needs no room")
				expect.Equal(t, int64(5), d.Remaining)
				for i := range 4 {
					d, err := st.Take(ctx, req("held"+strconv.Itoa(i), 0))
					must.NoError(t, err)
					expect.Equal(t, int64(3), d.Remaining, "held%d keeps its exact count", i)
				}
				expect.Equal(t, memory.Stats{Keys: 4, Refused: 10}, st.Stats())
			})
		}
	}
}

// A held key whose state has recovered makes room for a new one: it decides
// as a new key would, so no count is lost, and nothing counts as refused.
func TestRefuseWhenFullReclaimsRecoveredState(t *testing.T) {
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithMaxKeys(3), memory.WithShards(1), memory.WithSweepInterval(0), memory.WithRefuseWhenFull())
			l := core.PerMinute(5)
			for i := range 3 {
				_, err := st.Take(ctx, take("old"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			later := storetest.Start.Add(3 * time.Minute)
			d, err := st.Take(ctx, take("new", alg, l, later))
			must.NoError(t, err)
			expect.True(t, d.Allowed)
			expect.Equal(t, memory.Stats{Keys: 3}, st.Stats())
		})
	}
}

// Under a concurrent flood of new keys the bound holds, every request is
// admitted or refused, every refusal is counted, and exactly the keys held
// show their spent count.
func TestRefuseWhenFullConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []core.Algorithm{core.GCRA, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithMaxKeys(64), memory.WithShards(4), memory.WithSweepInterval(0), memory.WithRefuseWhenFull())
			l := core.PerHour(3)
			var admitted, refused atomic.Int64
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 300 {
						d, err := st.Take(ctx, take(fmt.Sprintf("g%d-%d", g, i), alg, l, storetest.Start))
						switch {
						case err == nil && d.Allowed:
							admitted.Add(1)
						case expect.ErrorIs(t, err, core.ErrStoreFull):
							refused.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			expect.Equal(t, int64(1200), admitted.Load()+refused.Load())
			expect.Equal(t, int64(st.Len()), admitted.Load(), "each admission holds a key")
			expect.LessOrEqual(t, st.Len(), 64, "the bound holds")
			expect.Equal(t, uint64(refused.Load()), st.Stats().Refused)
			expect.Zero(t, st.Stats().Evictions, "nothing evicted")
			var spent int
			for g := range 4 {
				for i := range 300 {
					peek := take(fmt.Sprintf("g%d-%d", g, i), alg, l, storetest.Start)
					peek.Cost = 0
					d, err := st.Take(ctx, peek)
					must.NoError(t, err)
					if d.Remaining == 2 {
						spent++
					}
				}
			}
			expect.Equal(t, st.Len(), spent, "every held key kept its count")
		})
	}
}
