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
				before := memStatsAfterGC()
				for i := range n {
					allow(strconv.Itoa(i) + string(pad[:keyLen-8]))
				}
				after := memStatsAfterGC()
				runtime.KeepAlive(allow)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "B/key")
			}
		})
	}
}

// floodGrowthMargin is how much the live heap may grow between the store's
// first filling of its bound and the flood's end before BenchmarkMemoryFlood
// fails: once full, a bounded store's heap is flat, and a store whose memory
// follows the keys it has seen instead of the keys it holds grows tenfold.
const floodGrowthMargin = 0.25

// BenchmarkMemoryFlood sends 10 million unique keys at a store bounded at one
// million, with a hot key that keeps sending among them. It reports the live
// heap and the heap in use (what the process holds from the OS) after 1M and
// after 10M keys, and per key held at the end, the growth since before the
// store was made. It fails if the live heap at the end exceeds the one at the
// bound by more than floodGrowthMargin, or if the hot key's admissions differ
// from an unbounded reference's. Under -short it sends a tenth of that at a
// tenth of the bound.
func BenchmarkMemoryFlood(b *testing.B) {
	bound, flood := 1_000_000, 10_000_000
	if testing.Short() {
		bound, flood = 100_000, 1_000_000
	}
	const mb = 1 << 20
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.SlidingWindow} {
		b.Run(alg.String(), func(b *testing.B) {
			for range b.N {
				r := runFlood(b, alg, bound, flood)
				b.ReportMetric(float64(r.atBound.HeapAlloc)/mb, "heapMB@bound")
				b.ReportMetric(float64(r.atEnd.HeapAlloc)/mb, "heapMB@end")
				b.ReportMetric(float64(r.atBound.HeapInuse)/mb, "inuseMB@bound")
				b.ReportMetric(float64(r.atEnd.HeapInuse)/mb, "inuseMB@end")
				b.ReportMetric(float64(int64(r.atEnd.HeapAlloc)-int64(r.base.HeapAlloc))/float64(r.held), "live-B/key")
				b.ReportMetric(float64(int64(r.atEnd.HeapInuse)-int64(r.base.HeapInuse))/float64(r.held), "inuse-B/key")
				b.ReportMetric(float64(r.held), "keys")
				if limit := float64(r.atBound.HeapAlloc) * (1 + floodGrowthMargin); float64(r.atEnd.HeapAlloc) > limit {
					b.Fatalf("live heap grew from %.1f MB at the bound to %.1f MB after the flood, more than %.0f%%",
						float64(r.atBound.HeapAlloc)/mb, float64(r.atEnd.HeapAlloc)/mb, 100*floodGrowthMargin)
				}
			}
		})
	}
}

// floodResult is the heap before a flood's store was made, when it first
// reached its bound, and at the end, with the keys it then held.
type floodResult struct {
	base, atBound, atEnd runtime.MemStats
	held                 int
}

// runFlood sends flood unique keys at a store of alg bounded at bound, with
// a hot key sending once every 100 keys, and fails if the hot key's
// admissions differ from an unbounded reference's.
func runFlood(b *testing.B, alg core.Algorithm, bound, flood int) floodResult {
	var r floodResult
	r.base = memStatsAfterGC()
	st, err := memory.New(memory.WithMaxKeys(bound), memory.WithSweepInterval(0))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	ctx := context.Background()
	ref := storetest.NewReference()
	limit := []core.Limit{core.PerMinute(600)}
	hot := core.TakeRequest{Key: "hot", Algorithm: alg, Limits: limit, Cost: 1}
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
			r.atBound = memStatsAfterGC()
		}
	}
	r.atEnd = memStatsAfterGC()
	r.held = st.Len()
	if admitted != want {
		b.Fatalf("hot key admitted %d, an unbounded store admits %d", admitted, want)
	}
	return r
}
