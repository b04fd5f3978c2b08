package memory_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// takeAll is take under several limits.
func takeAll(key string, alg core.Algorithm, now time.Time, limits ...core.Limit) core.TakeRequest {
	return core.TakeRequest{Key: key, Algorithm: alg, Limits: limits, Cost: 1, Now: now}
}

// Entries recycled from swept keys go to new keys while readers of the old
// ones run: under -race this is free of data races, and keys inserted in the
// middle of the churn get exactly their limit. The windows run under two
// limits, as under one they keep no entry. (The stale reader itself is
// tested deterministically in entry_internal_test.go.)
func TestRecycledEntriesKeepKeysApart(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithMaxKeys(1<<10), memory.WithShards(1), memory.WithSweepInterval(0))
			ctx := context.Background()
			const hotKeys, workers = 64, 4
			long := core.Every(5, 5*365*24*time.Hour)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() { // short-lived keys, swept and recycled as time moves on
					defer wg.Done()
					for i := range 1500 {
						at := storetest.Start.Add(time.Duration(i) * time.Minute)
						_, err := st.Take(ctx, takeAll("churn"+strconv.Itoa((i+w)%8), alg, at, core.PerMinute(2), core.Every(3, 2*time.Minute)))
						expect.NoError(t, err)
						if i%50 == w {
							st.Sweep()
						}
					}
				}()
			}
			admitted := make([][hotKeys]int, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range hotKeys * 8 {
						k := (i*5 + w) % hotKeys
						d, err := st.Take(ctx, takeAll("hot"+strconv.Itoa(k), alg, storetest.Start, long, core.Every(6, 8*365*24*time.Hour)))
						if expect.NoError(t, err) && d.Allowed {
							admitted[w][k]++
						}
					}
				}()
			}
			wg.Wait()
			for k := range hotKeys {
				total := 0
				for w := range workers {
					total += admitted[w][k]
				}
				expect.Equal(t, 5, total, "hot key %d", k)
			}
		})
	}
}
