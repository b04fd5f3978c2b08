package rueidisstore

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// BenchmarkTake measures decisions over 10,000 keys, at 1 goroutine and at 64
// (GOMAXPROCS x parallelism). The local cache is off: every decision is a
// round trip.
func BenchmarkTake(b *testing.B) {
	srv := redistest.Start(b)
	st := newStore(b, newClient(b, srv.Addr()), luascript.WithLocalCache(0))
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
	}
	limits := []core.Limit{core.PerSecond(1000)}
	for _, g := range []int{1, 64} {
		for _, alg := range []core.Algorithm{core.GCRA, core.SlidingWindow, core.SlidingLog} {
			b.Run(alg.String()+"/g"+strconv.Itoa(g), func(b *testing.B) {
				b.ReportAllocs()
				var n atomic.Int64
				take := func() error {
					i := n.Add(1)
					_, err := st.Take(context.Background(), core.TakeRequest{Key: keys[i%int64(len(keys))], Algorithm: alg, Limits: limits, Cost: 1})
					return err
				}
				if g == 1 {
					for b.Loop() {
						if err := take(); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := take(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
