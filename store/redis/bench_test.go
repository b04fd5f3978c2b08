package redisstore

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// floorScript is the least a Redis rate limiter can do per decision: one
// EVALSHA of INCR + PEXPIRE.
var floorScript = redis.NewScript(`local n = redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 60000) return n`)

// BenchmarkTake measures decisions over 10,000 keys, at 1 goroutine and at 64
// (GOMAXPROCS x parallelism), beside the floor: a bare EVALSHA through the same
// client. The local cache is off: every decision is a round trip.
func BenchmarkTake(b *testing.B) {
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, PoolSize: 64})
	b.Cleanup(func() { _ = client.Close() })
	st := newStore(b, client, luascript.WithLocalCache(0))
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
	}
	limits := []core.Limit{core.PerSecond(1_000_000 / 1000)}
	run := func(b *testing.B, goroutines int, op func(i int64) error) {
		b.ReportAllocs()
		var n atomic.Int64
		if goroutines == 1 {
			for b.Loop() {
				if err := op(n.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
			return
		}
		b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(n.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for _, g := range []int{1, 64} {
		for _, alg := range []core.Algorithm{core.GCRA, core.SlidingWindow, core.SlidingLog} {
			b.Run(alg.String()+"/g"+strconv.Itoa(g), func(b *testing.B) {
				run(b, g, func(i int64) error {
					_, err := st.Take(bg, core.TakeRequest{Key: keys[i%int64(len(keys))], Algorithm: alg, Limits: limits, Cost: 1})
					return err
				})
			})
		}
		// What a decision costs as the HTTP policy asks it, within a store
		// timeout (core.WithStoreTimeout): the context's deadline and value,
		// and go-redis setting each command's socket deadlines from it
		// (ContextTimeoutEnabled, which New demands).
		b.Run("gcra-store-timeout/g"+strconv.Itoa(g), func(b *testing.B) {
			run(b, g, func(i int64) error {
				ctx, cancel := core.WithStoreTimeout(bg, 50*time.Millisecond)
				_, err := st.Take(ctx, core.TakeRequest{Key: keys[i%int64(len(keys))], Algorithm: core.GCRA, Limits: limits, Cost: 1})
				cancel()
				return err
			})
		})
		b.Run("floor-evalsha/g"+strconv.Itoa(g), func(b *testing.B) {
			run(b, g, func(i int64) error {
				return floorScript.Run(bg, client, []string{"floor:" + keys[i%int64(len(keys))]}).Err()
			})
		})
	}
}

// BenchmarkFlood has 64 goroutines hammer one key that is already over its
// limit, with the local cache of denials off and on: with it, the denials are
// answered without a round trip.
func BenchmarkFlood(b *testing.B) {
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, PoolSize: 64})
	b.Cleanup(func() { _ = client.Close() })
	for _, size := range []int{0, luascript.DefaultLocalCacheSize} {
		b.Run("cache="+strconv.Itoa(size), func(b *testing.B) {
			st := newStore(b, client, luascript.WithLocalCache(size))
			req := core.TakeRequest{Key: "flooded", Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
			if _, err := st.Take(bg, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					d, err := st.Take(bg, req)
					if err != nil || d.Allowed {
						b.Errorf("flooded key: allowed %v, error %v", d.Allowed, err)
						return
					}
				}
			})
		})
	}
}
