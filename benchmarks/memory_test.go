package benchmarks

// The in-process stores, side by side: one hot key (admissions, and the
// denial path on its own), a million keys, and (memory_heap_test.go) the heap
// each key costs. Every row decides through its library's own public API,
// clock read included; memory_peers_test.go builds the peers.
//
//	go test -run '^$' -bench 'MemoryHotKey|MemoryManyKeys' -benchmem ./benchmarks

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// memRate is the sustained rate, per second, of the rows that admit, for the
// libraries that take one: one request a microsecond, the most a ratewarden
// limit may allow.
const memRate = 1_000_000

// unreachable is the burst (or window quota) of the rows that admit: 2^40
// decisions, which two goroutines at 10 ns a decision would take over an hour
// to spend. No run reaches it, so every decision of those rows is an
// admission and takes the path that writes the key's state.
const unreachable = 1 << 40

// quota is the limit a row is built with, which each implementation
// translates into its own library's terms.
type quota int

const (
	// admitAll is a limit no run can reach: memRate a second where the
	// library has a rate, with a burst of unreachable.
	admitAll quota = iota
	// onePerHour admits a key's first request and denies the rest for an
	// hour. It serves the rows that measure the denial path, and the rows
	// that count the heap of keys that each sent one request (no key recovers,
	// and so none is dropped, while the run lasts).
	onePerHour
)

// String names q in test names.
func (q quota) String() string {
	if q == admitAll {
		return "admit-all"
	}
	return "one-per-hour"
}

// allowFunc decides one request for key; each implementation wraps a limiter.
type allowFunc func(key string) bool

// impl is one row: a named limiter built under a quota.
type impl struct {
	name string
	make func(tb testing.TB, q quota) allowFunc
	// deniesOnly marks a limiter that no limit keeps admitting a hot key for a
	// whole run; it has no admitAll row.
	deniesOnly bool
}

// ours is ratewarden's in-process store under alg, bounded high enough that
// BenchmarkMemoryBytesPerKey's largest count is held whole.
func ours(alg core.Algorithm) impl {
	return impl{
		name: "ratewarden-" + alg.String(),
		// The sliding log keeps every admitted timestamp, at most MaxLogRate of
		// them, over a period of at least MaxLogRate microseconds (100 ms): a
		// hot key spends that in a fraction of a run, after which the row would
		// measure denials. It appears in the denial and memory rows only.
		deniesOnly: alg == core.SlidingLog,
		make: func(tb testing.TB, q quota) allowFunc {
			st, err := memory.New(memory.WithMaxKeys(4 << 20))
			require.NoError(tb, err)
			tb.Cleanup(func() { _ = st.Close() })
			lim, err := core.NewLimiter(st, alg, ourLimit(alg, q))
			require.NoError(tb, err)
			ctx := context.Background()
			return func(key string) bool {
				d, err := lim.Allow(ctx, key)
				return err == nil && d.Allowed
			}
		},
	}
}

// ourLimit is q in ratewarden's terms. The meters admit memRate a second with
// a burst of unreachable (the leaky bucket's admissions queue: Decision.Delay
// grows, which the middleware would wait out); the windows take no burst
// other than their quota, so the fixed window's is unreachable per 2^40
// microseconds (12.7 days), the same one request a microsecond, and the
// sliding window's 2^28 per core.MaxPeriod: a sliding window packs into the
// memory store's one-word state only while its counts and window index fit
// 63 bits, and 2^40 per 12.7 days would not (it would time the entry kept
// for larger limits instead); 2^28 is still more than a run decides.
func ourLimit(alg core.Algorithm, q quota) core.Limit {
	switch {
	case q == onePerHour:
		return core.PerHour(1)
	case alg == core.FixedWindow:
		return core.Every(unreachable, unreachable*time.Microsecond)
	case alg == core.SlidingWindow:
		return core.Every(1<<28, core.MaxPeriod)
	default:
		return core.PerSecond(memRate).WithBurst(unreachable)
	}
}

// allImpls are ratewarden's algorithms and the peers, the rows that can be
// built under q.
func allImpls(q quota) []impl {
	var all []impl
	for _, alg := range core.Algorithms() {
		all = append(all, ours(alg))
	}
	all = append(all, peers...)
	rows := all[:0]
	for _, im := range all {
		if q != admitAll || !im.deniesOnly {
			rows = append(rows, im)
		}
	}
	return rows
}

// floorClockCAS is the floor of the admitting hot-key rows: what an exact
// meter whose state is one shared word must at least do per admission. It
// reads the clock once (the monotonic clock, as core.SystemClock does), then
// loads the word and swaps in the next state until the swap succeeds: a lost
// swap is an admission not yet recorded. It decides nothing else.
func floorClockCAS() impl {
	return impl{name: "floor-clock-cas", make: func(testing.TB, quota) allowFunc {
		start := time.Now()
		var word atomic.Int64
		return func(string) bool {
			now := int64(time.Since(start) / time.Microsecond)
			for {
				v := word.Load()
				if word.CompareAndSwap(v, max(v, now)+1) {
					return true
				}
			}
		}
	}}
}

// floorClockLoad is the floor of the denying hot-key rows: one clock read and
// one load of the shared word, compared, which a meter needs to deny without
// writing. Its word says "spent until an hour from the start", so it denies
// every request, the first too.
func floorClockLoad() impl {
	return impl{name: "floor-clock-load", make: func(testing.TB, quota) allowFunc {
		start := time.Now()
		var word atomic.Int64
		word.Store(int64(time.Hour / time.Microsecond))
		return func(string) bool {
			return word.Load() <= int64(time.Since(start)/time.Microsecond)
		}
	}}
}

// BenchmarkMemoryHotKey: every goroutine decides on the same key, under a
// limit no run reaches, so every decision is an admission (allowed/op is
// reported, and the row fails below 1). floor-clock-cas is the floor.
func BenchmarkMemoryHotKey(b *testing.B) {
	for _, im := range append(allImpls(admitAll), floorClockCAS()) {
		b.Run(im.name, func(b *testing.B) {
			if allowed := runHotKey(b, im.make(b, admitAll)); allowed != int64(b.N) {
				b.Fatalf("admitted %d of %d decisions: the limit was reached, so the row measured denials", allowed, b.N)
			}
		})
	}
}

// BenchmarkMemoryHotKeyDenied: every goroutine decides on the same key, whose
// one request an hour was spent before the timer started, so every decision
// is a denial (allowed/op 0, or the row fails). floor-clock-load is the floor.
func BenchmarkMemoryHotKeyDenied(b *testing.B) {
	for _, im := range append(allImpls(onePerHour), floorClockLoad()) {
		b.Run(im.name, func(b *testing.B) {
			if allowed := runHotKey(b, im.make(b, onePerHour)); allowed != 0 {
				b.Fatalf("admitted %d of %d decisions after the hour's one was spent", allowed, b.N)
			}
		})
	}
}

// runHotKey decides once on "hot" (so the key exists), then b.N times from
// every goroutine, and reports and returns the admissions.
func runHotKey(b *testing.B, allow allowFunc) int64 {
	allow("hot")
	var allowed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := int64(0)
		for pb.Next() {
			if allow("hot") {
				n++
			}
		}
		allowed.Add(n)
	})
	b.StopTimer()
	b.ReportMetric(float64(allowed.Load())/float64(b.N), "allowed/op")
	return allowed.Load()
}

var (
	manyKeysOnce sync.Once
	manyKeys     []string
)

// keys1M returns the 1,000,000 client keys (100,000 under -short, so CI's
// single pass stays quick).
func keys1M() []string {
	manyKeysOnce.Do(func() {
		n := 1_000_000
		if testing.Short() {
			n = 100_000
		}
		manyKeys = make([]string, n)
		for i := range manyKeys {
			manyKeys[i] = "client-" + strconv.Itoa(i)
		}
	})
	return manyKeys
}

// BenchmarkMemoryManyKeys: random keys among 1,000,000 that already exist,
// under a limit no run reaches (allowed/op is reported, and the row fails
// below 1).
func BenchmarkMemoryManyKeys(b *testing.B) {
	keys := keys1M()
	for _, im := range allImpls(admitAll) {
		b.Run(im.name, func(b *testing.B) {
			allow := im.make(b, admitAll)
			for _, k := range keys {
				allow(k)
			}
			var allowed atomic.Int64
			var seeds atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seeds.Add(1), 42))
				n := int64(0)
				for pb.Next() {
					if allow(keys[rng.IntN(len(keys))]) {
						n++
					}
				}
				allowed.Add(n)
			})
			b.StopTimer()
			b.ReportMetric(float64(allowed.Load())/float64(b.N), "allowed/op")
			if allowed.Load() != int64(b.N) {
				b.Fatalf("admitted %d of %d decisions", allowed.Load(), b.N)
			}
		})
	}
}

// TestRowsKeepTheirQuota checks, outside the benchmarks' timing, that every
// row's limiter means what the benchmarks say of it: under admitAll a key is
// admitted 10,000 times in a row, under onePerHour once and then denied, and
// either way another key has a quota of its own.
func TestRowsKeepTheirQuota(t *testing.T) {
	cases := []struct {
		q        quota
		requests int
		admitted int
	}{
		{admitAll, 10_000, 10_000},
		{onePerHour, 100, 1},
	}
	for _, c := range cases {
		for _, im := range allImpls(c.q) {
			t.Run(c.q.String()+"/"+im.name, func(t *testing.T) {
				allow := im.make(t, c.q)
				assert.Equal(t, c.admitted, admissions(allow, "hot", c.requests))
				assert.True(t, allow("another-key"), "a fresh key is admitted")
			})
		}
	}
}

// TestFloorsAdmitAndDenyAll: the admitting floor admits every request, the
// denying floor none (the first included, unlike the rows it is the floor of).
func TestFloorsAdmitAndDenyAll(t *testing.T) {
	assert.Equal(t, 10_000, admissions(floorClockCAS().make(t, admitAll), "hot", 10_000))
	assert.Equal(t, 0, admissions(floorClockLoad().make(t, onePerHour), "hot", 10_000))
}

// admissions asks allow n times for key and counts the admissions.
func admissions(allow allowFunc, key string, n int) int {
	admitted := 0
	for range n {
		if allow(key) {
			admitted++
		}
	}
	return admitted
}

// TestOurRowsAllocateNothing asserts what the hot-key rows' allocs/op column
// reports for ratewarden: a decision on a key the store holds, admitted or
// denied, allocates nothing.
func TestOurRowsAllocateNothing(t *testing.T) {
	for _, q := range []quota{admitAll, onePerHour} {
		for _, alg := range core.Algorithms() {
			im := ours(alg)
			if q == admitAll && im.deniesOnly {
				continue
			}
			t.Run(q.String()+"/"+im.name, func(t *testing.T) {
				allow := im.make(t, q)
				allow("hot")
				assert.Zero(t, testing.AllocsPerRun(1000, func() { allow("hot") }))
			})
		}
	}
}
