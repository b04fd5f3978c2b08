package benchmarks

// What an in-flight limit (core.WithInFlight) costs beside the same rate
// limit without one: on the memory store a request takes its slot with one
// compare-and-swap and gives it back with another, allocating nothing (the
// benchmark fails if it allocates); on Redis it adds one round trip to take
// the slot (the acquire script) and one to give it back (the release
// script), so a request makes three where a rate-only one makes one. The
// HTTP rows are whole requests through stdhttp, the slot released in the
// middleware's defer.
//
//	go test -run '^$' -bench '^BenchmarkInFlight' -benchmem ./benchmarks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// inflightRows are the two configurations of every table: the rate alone,
// and the rate with an in-flight limit.
var inflightRows = []struct {
	name string
	opts []core.Option
}{
	{"rate-only", nil},
	{"inflight", []core.Option{core.WithInFlight(core.Concurrent(core.MaxInFlightSlots))}},
}

// inflightRequest returns one request of lim for key: the rate decision,
// then, with an in-flight limit, the slot taken and given back.
func inflightRequest(b *testing.B, lim *core.Limiter, key string) func() {
	ctx := context.Background()
	withSlot := !lim.InFlight().IsZero()
	return func() {
		d, err := lim.Allow(ctx, key)
		if err != nil || !d.Allowed {
			b.Fatalf("%v %+v", err, d)
		}
		if !withSlot {
			return
		}
		s, ld, err := lim.Acquire(ctx, key)
		if err != nil || !ld.Allowed {
			b.Fatalf("%v %+v", err, ld)
		}
		if err := s.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInFlightMemory(b *testing.B) {
	for _, row := range inflightRows {
		b.Run(row.name, func(b *testing.B) {
			st, err := memory.New(memory.WithSweepInterval(0))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40), append([]core.Option{core.WithoutBreaker()}, row.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			req := inflightRequest(b, lim, "k")
			req() // hold the key
			if n := testing.AllocsPerRun(100, req); n != 0 {
				b.Fatalf("a request allocates %v times", n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				req()
			}
		})
	}
}

func BenchmarkInFlightHTTP(b *testing.B) {
	for _, row := range inflightRows {
		b.Run(row.name, func(b *testing.B) {
			st, err := memory.New(memory.WithSweepInterval(0))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40), row.opts...)
			if err != nil {
				b.Fatal(err)
			}
			mw, err := stdhttp.New(lim)
			if err != nil {
				b.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = "192.0.2.1:1234"
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				clear(w.h)
				h.ServeHTTP(w, req)
				if w.status != 0 && w.status != http.StatusOK {
					b.Fatal(w.status)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

func BenchmarkInFlightRedis(b *testing.B) {
	srv := redistest.Start(b)
	c := newRedisClients(b, srv.Addr())
	for _, row := range inflightRows {
		b.Run(row.name, func(b *testing.B) {
			st, err := redisstore.New(c.rdb)
			if err != nil {
				b.Fatal(err)
			}
			lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40), row.opts...)
			if err != nil {
				b.Fatal(err)
			}
			req := inflightRequest(b, lim, "bench:inflight:"+row.name)
			req()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				req()
			}
		})
	}
}
