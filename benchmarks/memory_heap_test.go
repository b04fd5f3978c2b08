package benchmarks

// The heap the in-process stores cost: per key at several key counts, with
// long keys, and under a flood of unique keys larger than the bound.
//
//	go test -run '^$' -bench 'MemoryBytesPerKey|MemoryLongKeys|MemoryFlood' ./benchmarks

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// bytesPerKeyCounts are the key counts BenchmarkMemoryBytesPerKey measures
// at, on both sides of 2^18 (where ratewarden's tables are exactly half full),
// so that no figure is a lucky point. Under -short, only the small ones.
func bytesPerKeyCounts() []int {
	if testing.Short() {
		return []int{10_000, 100_000}
	}
	return []int{100_000, 262_144, 1_000_000, 3_000_000}
}

// BenchmarkMemoryBytesPerKey reports the heap each held key costs, keys made
// fresh as a server would receive them (so a store that keeps the key pays
// for it), each sending one request under a limit of one an hour (so no key
// recovers and is dropped during the run). live-B/key is the growth of the
// live heap per key; inuse-B/key the growth of the heap's spans in use, what
// the process holds from the OS for it (fragmentation included). Both are
// read after a full collection.
func BenchmarkMemoryBytesPerKey(b *testing.B) {
	for _, im := range allImpls(onePerHour) {
		for _, n := range bytesPerKeyCounts() {
			b.Run(im.name+"/keys="+strconv.Itoa(n), func(b *testing.B) {
				for range b.N {
					live, inUse := heapPerKey(b, im, n)
					b.ReportMetric(live, "live-B/key")
					b.ReportMetric(inUse, "inuse-B/key")
				}
			})
		}
	}
}

// heapPerKey builds im, sends one request from each of n fresh keys and
// returns the growth per key of the live heap and of the heap in use.
func heapPerKey(b *testing.B, im impl, n int) (live, inUse float64) {
	allow := im.make(b, onePerHour)
	before := memStatsAfterGC()
	for i := range n {
		if !allow("client-" + strconv.Itoa(i)) {
			b.Fatalf("key %d was denied its first request", i)
		}
	}
	after := memStatsAfterGC()
	runtime.KeepAlive(allow)
	perKey := func(after, before uint64) float64 { return float64(int64(after)-int64(before)) / float64(n) }
	return perKey(after.HeapAlloc, before.HeapAlloc), perKey(after.HeapInuse, before.HeapInuse)
}

// memStatsAfterGC runs a full collection (runtime.GC returns once sweeping is
// done) and reads the heap's statistics.
func memStatsAfterGC() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// BenchmarkMemoryLongKeys: 10 KB API keys cost no more per key than short ones.
func BenchmarkMemoryLongKeys(b *testing.B) {
	const n = 1 << 14
	for _, keyLen := range []int{16, 10 << 10} {
		b.Run(strconv.Itoa(keyLen)+"B-keys", func(b *testing.B) {
			for range b.N {
				allow := ours(core.GCRA).make(b, onePerHour)
				pad := make([]byte, keyLen)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range n {
					allow(strconv.Itoa(i) + string(pad[:keyLen-8]))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(allow)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "B/key")
			}
		})
	}
}

// BenchmarkMemoryFlood sends 10 million unique keys at a store bounded at one
// million, with a hot key that keeps sending among them. It reports the heap
// after 1M and after 10M keys (flat is the target) and fails if the hot key's
// admissions differ from an unbounded reference's. Under -short it sends a
// tenth of that at a tenth of the bound.
func BenchmarkMemoryFlood(b *testing.B) {
	bound, flood := 1_000_000, 10_000_000
	if testing.Short() {
		bound, flood = 100_000, 1_000_000
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.SlidingWindow} {
		b.Run(alg.String(), func(b *testing.B) {
			for range b.N {
				st, err := memory.New(memory.WithMaxKeys(bound), memory.WithSweepInterval(0))
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				ref := storetest.NewReference()
				limit := []core.Limit{core.PerMinute(600)}
				hot := core.TakeRequest{Key: "hot", Algorithm: alg, Limits: limit, Cost: 1}
				var heapAtBound uint64
				admitted, want := 0, 0
				for i := range flood {
					now := storetest.Start.Add(time.Duration(i) * time.Microsecond)
					_, err := st.Take(ctx, core.TakeRequest{Key: "flood-" + strconv.Itoa(i), Algorithm: alg, Limits: limit, Cost: 1, Now: now})
					if err != nil {
						b.Fatal(err)
					}
					if i%100 == 0 {
						hot.Now = now
						if d, _ := st.Take(ctx, hot); d.Allowed {
							admitted++
						}
						if d, _ := ref.Take(ctx, hot); d.Allowed {
							want++
						}
					}
					if i == bound {
						heapAtBound = memStatsAfterGC().HeapAlloc
					}
				}
				heapAtEnd := memStatsAfterGC().HeapAlloc
				if admitted != want {
					b.Fatalf("hot key admitted %d, an unbounded store admits %d", admitted, want)
				}
				b.ReportMetric(float64(heapAtBound)/(1<<20), "heapMB@bound")
				b.ReportMetric(float64(heapAtEnd)/(1<<20), "heapMB@end")
				b.ReportMetric(float64(st.Len()), "keys")
				st.Close()
			}
		})
	}
}
