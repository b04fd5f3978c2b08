package memory_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// windowBytesPerKey is the most heap a key of the fixed or the sliding
// window may cost, live and in use, at any key count.
const windowBytesPerKey = 64

// heapPerKey sends one request from each of n fresh keys, under a limit of
// one an hour (no key recovers and is dropped), to a store bounded well above
// n, and returns the growth per key of the live heap and of the heap in use.
func heapPerKey(t testing.TB, alg core.Algorithm, n int) (live, inUse float64) {
	liveBase, inUseBase := heapAfterGC()
	st, err := memory.New(memory.WithMaxKeys(4<<20), memory.WithSweepInterval(0))
	must.NoError(t, err)
	defer func() { must.NoError(t, st.Close()) }()
	ctx := context.Background()
	req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{core.PerHour(1)}, Cost: 1, Now: storetest.Start}
	var buf []byte
	for i := range n {
		buf = strconv.AppendInt(append(buf[:0], "client-"...), int64(i), 10)
		req.Key = string(buf)
		d, err := st.Take(ctx, req)
		must.NoError(t, err)
		must.True(t, d.Allowed, "a fresh key's first request")
	}
	liveEnd, inUseEnd := heapAfterGC()
	must.Equal(t, n, st.Len())
	runtime.KeepAlive(st)
	perKey := func(end, base uint64) float64 { return float64(int64(end)-int64(base)) / float64(n) }
	return perKey(liveEnd, liveBase), perKey(inUseEnd, inUseBase)
}

// A key of the fixed or the sliding window costs at most 64 bytes of heap,
// live and in use, at key counts on both sides of 2^18 (where the tables are
// exactly half full): its state is one word in a 24-byte slot. Under the race
// detector, which runs a key about sixteen times slower, the counts are
// 65,536 and 100,000, so CI's -race run checks it in seconds. (Much fewer
// keys would not do: a shard's table is then a small object, whose span the
// tables it outgrew leave partly in use.)
func TestWindowBytesPerKey(t *testing.T) {
	counts := []int{100_000, 262_144, 1_000_000}
	if raceEnabled {
		counts = []int{65_536, 100_000}
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, n := range counts {
			t.Run(alg.String()+"/keys="+strconv.Itoa(n), func(t *testing.T) {
				live, inUse := heapPerKey(t, alg, n)
				t.Logf("live %.1f B/key, in use %.1f B/key", live, inUse)
				expect.LessOrEqual(t, live, float64(windowBytesPerKey), "live heap per key")
				expect.LessOrEqual(t, inUse, float64(windowBytesPerKey), "heap in use per key")
			})
		}
	}
}
