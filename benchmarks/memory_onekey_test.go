package benchmarks

// BenchmarkMemoryOneKey: one hot key at exactly 1 and 2 goroutines, with the
// process's GOMAXPROCS left as it is, ratewarden's meters beside the peers
// that lead that row (sethvargo/go-limiter, x/time/rate in a map, Echo's
// memory store) and the floor; then the same key flooded with denials
// (its one request an hour spent), the path a key under attack takes.
//
//	go test -run '^$' -bench MemoryOneKey -benchmem ./benchmarks
//	bash benchmarks/onekey_runs.sh     # in 5 separate processes
//
// At 1 goroutine the rows run in a plain loop (no RunParallel machinery); at
// 2, two goroutines share b.N. Every admit row must admit every decision and
// every deny row deny every one, or the row fails.

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratewarden/ratewarden/core"
)

// oneKeyRows are the rows of BenchmarkMemoryOneKey under q.
func oneKeyRows(q quota) []impl {
	rows := []impl{ours(core.GCRA), ours(core.TokenBucket)}
	for _, p := range peers {
		switch p.name {
		case "sethvargo", "x-time-rate", "echo-memorystore":
			rows = append(rows, p)
		}
	}
	if q == admitAll {
		return append(rows, floorClockCAS())
	}
	return append(rows, floorClockLoad())
}

func BenchmarkMemoryOneKey(b *testing.B) {
	for _, q := range []quota{admitAll, onePerHour} {
		mode := "admit"
		if q == onePerHour {
			mode = "deny"
		}
		for _, g := range []int{1, 2} {
			for _, im := range oneKeyRows(q) {
				b.Run(mode+"/g="+strconv.Itoa(g)+"/"+im.name, func(b *testing.B) {
					allowed := runOneKey(b, g, im.make(b, q))
					switch {
					case q == admitAll && allowed != int64(b.N):
						b.Fatalf("admitted %d of %d decisions: the limit was reached, so the row measured denials", allowed, b.N)
					case q == onePerHour && allowed != 0:
						b.Fatalf("admitted %d of %d decisions after the hour's one was spent", allowed, b.N)
					}
				})
			}
		}
	}
}

// runOneKey decides once on "hot" (so the key exists, and under onePerHour
// its one request is spent), then b.N times from g goroutines, and reports
// and returns the admissions.
func runOneKey(b *testing.B, g int, allow allowFunc) int64 {
	allow("hot")
	var allowed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	if g == 1 {
		n := int64(0)
		for range b.N {
			if allow("hot") {
				n++
			}
		}
		allowed.Store(n)
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := int64(0)
				// Claims of 64 decisions keep the shared counter off the
				// decision's path.
				for {
					end := next.Add(64)
					from := end - 64
					if from >= int64(b.N) {
						break
					}
					for range min(end, int64(b.N)) - from {
						if allow("hot") {
							n++
						}
					}
				}
				allowed.Add(n)
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(allowed.Load())/float64(b.N), "allowed/op")
	runtime.KeepAlive(allow)
	return allowed.Load()
}
