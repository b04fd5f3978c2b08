package memory_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

func TestStatsCountsKeysAndEvictions(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			clock := core.NewManualClock(storetest.Start)
			st := newStore(t, memory.WithMaxKeys(10), memory.WithShards(1), memory.WithSweepInterval(0), memory.WithClock(clock))
			ctx := context.Background()
			l := core.PerMinute(5)
			expect.Equal(t, memory.Stats{}, st.Stats(), "a new store")
			for i := range 25 {
				_, err := st.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			expect.Equal(t, memory.Stats{Keys: 10, Evictions: 15}, st.Stats(), "15 live keys made room for new ones")
			// Two periods on, every state has recovered: a new key reclaims
			// one, which loses no count and is no eviction.
			fresh := newStore(t, memory.WithMaxKeys(10), memory.WithShards(1), memory.WithSweepInterval(0), memory.WithClock(clock))
			for i := range 10 {
				_, err := fresh.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			later := take("late", alg, l, storetest.Start.Add(2*time.Minute+time.Second))
			_, err := fresh.Take(ctx, later)
			must.NoError(t, err)
			expect.Equal(t, memory.Stats{Keys: 10}, fresh.Stats())
			must.NoError(t, fresh.Reset(ctx, later))
			expect.Equal(t, memory.Stats{Keys: 9}, fresh.Stats(), "a reset is no eviction")
		})
	}
}

// Stats may be read while requests run (the metrics modules scrape it).
func TestStatsWhileTaking(t *testing.T) {
	st := newStore(t, memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				_, err := st.Take(context.Background(), take(fmt.Sprintf("g%d-%d", g, i), core.GCRA, core.PerMinute(5), storetest.Start))
				expect.NoError(t, err)
			}
		}()
	}
	for range 50 {
		s := st.Stats()
		expect.LessOrEqual(t, s.Keys, 64)
	}
	wg.Wait()
	expect.Equal(t, memory.Stats{Keys: 64, Evictions: 4*500 - 64}, st.Stats())
}

// The one-word paths (a meter or a window under one limit, updated with
// compare-and-swap) refund racing with spends, never above a fresh key.
func TestRefundOnTheWordPath(t *testing.T) {
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket, core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithSweepInterval(0))
			ctx := context.Background()
			spendReq := take("k", alg, core.Every(50, time.Minute), storetest.Start)
			refundReq := spendReq
			refundReq.Cost, refundReq.Admitted = -1, storetest.Start
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 40 {
						req := spendReq
						if g%2 == 1 {
							req = refundReq
						}
						_, err := st.Take(ctx, req)
						expect.NoError(t, err)
					}
				}()
			}
			wg.Wait()
			peek := spendReq
			peek.Cost = 0
			d, err := st.Take(ctx, peek)
			must.NoError(t, err)
			expect.GreaterOrEqual(t, d.Remaining, int64(0))
			expect.LessOrEqual(t, d.Remaining, int64(50), "never above a fresh key's quota")
		})
	}
}
