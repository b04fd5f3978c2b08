package benchmarks

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	sethmemory "github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	throttledmem "github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// memRate is the limit every in-memory benchmark uses: high enough that the
// decisions are mostly admissions, as on a healthy API.
const memRate = 1_000_000

// allowFunc decides one request for key; each implementation wraps a limiter.
type allowFunc func(key string) bool

type impl struct {
	name string
	make func(tb testing.TB) allowFunc
}

func ours(alg core.Algorithm) impl {
	return impl{"ratewarden-" + alg.String(), func(tb testing.TB) allowFunc {
		st, err := memory.New(memory.WithMaxKeys(4 << 20))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close() })
		lim, err := core.NewLimiter(st, alg, core.PerSecond(min(memRate, core.MaxLogRate*int64(boolInt(alg == core.SlidingLog))+memRate*int64(boolInt(alg != core.SlidingLog)))))
		if err != nil {
			tb.Fatal(err)
		}
		ctx := context.Background()
		return func(key string) bool {
			d, err := lim.Allow(ctx, key)
			return err == nil && d.Allowed
		}
	}}
}

var peers = []impl{
	{"x-time-rate", func(testing.TB) allowFunc {
		var mu sync.Mutex
		m := map[string]*rate.Limiter{}
		return func(key string) bool {
			mu.Lock()
			l, ok := m[key]
			if !ok {
				l = rate.NewLimiter(memRate, memRate)
				m[key] = l
			}
			mu.Unlock()
			return l.Allow()
		}
	}},
	{"sethvargo", func(tb testing.TB) allowFunc {
		st, err := sethmemory.New(&sethmemory.Config{Tokens: memRate, Interval: time.Second})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { st.Close(context.Background()) })
		ctx := context.Background()
		return func(key string) bool {
			_, _, _, ok, _ := st.Take(ctx, key)
			return ok
		}
	}},
	{"ulule", func(testing.TB) allowFunc {
		lim := ulule.New(ululemem.NewStore(), ulule.Rate{Period: time.Second, Limit: memRate})
		ctx := context.Background()
		return func(key string) bool {
			c, err := lim.Get(ctx, key)
			return err == nil && !c.Reached
		}
	}},
	{"throttled", func(tb testing.TB) allowFunc {
		st, err := throttledmem.NewCtx(0)
		if err != nil {
			tb.Fatal(err)
		}
		rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{MaxRate: throttled.PerSec(memRate), MaxBurst: memRate})
		if err != nil {
			tb.Fatal(err)
		}
		ctx := context.Background()
		return func(key string) bool {
			limited, _, err := rl.RateLimitCtx(ctx, key, 1)
			return err == nil && !limited
		}
	}},
	{"httprate", func(testing.TB) allowFunc {
		c := httprate.NewLocalLimitCounter(time.Second)
		return func(key string) bool {
			now := time.Now().UTC().Truncate(time.Second)
			cur, prev, _ := c.Get(key, now, now.Add(-time.Second))
			if float64(prev)*0.5+float64(cur) >= memRate {
				return false
			}
			c.Increment(key, now)
			return true
		}
	}},
}

func allImpls() []impl {
	var all []impl
	for _, alg := range core.Algorithms() {
		all = append(all, ours(alg))
	}
	return append(all, peers...)
}

// BenchmarkMemoryHotKey: every goroutine decides on the same key.
func BenchmarkMemoryHotKey(b *testing.B) {
	for _, im := range allImpls() {
		b.Run(im.name, func(b *testing.B) {
			allow := im.make(b)
			allow("hot")
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					allow("hot")
				}
			})
		})
	}
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

// BenchmarkMemoryManyKeys: random keys among 1,000,000 that already exist.
func BenchmarkMemoryManyKeys(b *testing.B) {
	keys := keys1M()
	for _, im := range allImpls() {
		if im.name == "ratewarden-sliding-log" {
			continue // 1M keys x a log each is its own benchmark's business
		}
		b.Run(im.name, func(b *testing.B) {
			allow := im.make(b)
			for _, k := range keys {
				allow(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var seed sync.Mutex
			n := uint64(0)
			b.RunParallel(func(pb *testing.PB) {
				seed.Lock()
				n++
				rng := rand.New(rand.NewPCG(n, 42))
				seed.Unlock()
				for pb.Next() {
					allow(keys[rng.IntN(len(keys))])
				}
			})
		})
	}
}

// BenchmarkMemoryBytesPerKey reports the heap each tracked key costs, keys
// made fresh as a server would receive them (so a store that keeps the key
// pays for it).
func BenchmarkMemoryBytesPerKey(b *testing.B) {
	n := 1 << 18
	if testing.Short() {
		n = 1 << 14
	}
	for _, im := range allImpls() {
		b.Run(im.name, func(b *testing.B) {
			for range b.N {
				allow := im.make(b)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range n {
					allow("client-" + strconv.Itoa(i))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(allow)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "B/key")
			}
		})
	}
}

// BenchmarkMemoryLongKeys: 10 KB API keys cost no more per key than short ones.
func BenchmarkMemoryLongKeys(b *testing.B) {
	const n = 1 << 14
	for _, keyLen := range []int{16, 10 << 10} {
		b.Run(strconv.Itoa(keyLen)+"B-keys", func(b *testing.B) {
			for range b.N {
				allow := ours(core.GCRA).make(b)
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
						heapAtBound = heapNow()
					}
				}
				heapAtEnd := heapNow()
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

func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
