package benchmarks

// BenchmarkHTTPDenied: the denied path through Fiber, which an attack or a
// client that keeps sending past its quota takes on nearly every request.
//
//	go test -run '^$' -bench HTTPDenied -benchmem -count 5 ./benchmarks

import (
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fibermw"
	"github.com/ratewarden/ratewarden/store/memory"
)

// deniedLimiter returns a GCRA limiter on a memory store that admits one
// request an hour.
func deniedLimiter(b *testing.B) *core.Limiter {
	b.Helper()
	st, err := memory.New()
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(1))
	require.NoError(b, err)
	return lim
}

// fiberDeniedRows are Fiber's own limiter and ratewarden's configurations,
// each admitting one request an hour per client IP.
func fiberDeniedRows() []fiberRow {
	rows := []fiberRow{{"fiber-limiter", func(*testing.B) fiber.Handler {
		return fiberlimiter.New(fiberlimiter.Config{Max: 1, Expiration: time.Hour})
	}}}
	for _, v := range rwVariants {
		rows = append(rows, fiberRow{v.name, func(b *testing.B) fiber.Handler {
			m, err := fibermw.New(deniedLimiter(b), v.opts...)
			require.NoError(b, err)
			return m
		}})
	}
	return rows
}

// BenchmarkHTTPDenied times whole denied requests (the handler never runs, so
// there is no bare run to subtract; compare the rows): Fiber's handler called
// directly, and FiberServer through fasthttp's server loop, 16 pipelined
// requests a call, every answer written out. The client's one request of the
// hour is spent before the timer starts; a row fails unless its last answers
// were all 429.
func BenchmarkHTTPDenied(b *testing.B) {
	for _, m := range fiberDeniedRows() {
		b.Run("Fiber/"+m.name, func(b *testing.B) {
			serve, code := serveFastHandler(fiberApp(m.make(b)))
			runDenied(b, serve, code, 1)
		})
	}
	for _, m := range fiberDeniedRows() {
		b.Run("FiberServer/"+m.name, func(b *testing.B) {
			serve, code := serveFast(fiberApp(m.make(b)))
			runDenied(b, serve, code, fastBatch)
		})
	}
}

// runDenied calls serve once to spend the quota, then enough times for b.N
// requests at perCall a call, and reports the time per request.
func runDenied(b *testing.B, serve func(), code func() int, perCall int) {
	serve()
	calls := (b.N + perCall - 1) / perCall
	b.ReportAllocs()
	b.ResetTimer()
	for range calls {
		serve()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls*perCall), "ns/request")
	if c := code(); c != fasthttp.StatusTooManyRequests {
		b.Fatalf("status %d, want 429", c)
	}
}
