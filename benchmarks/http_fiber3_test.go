package benchmarks

// BenchmarkHTTPAddedFiber3 and BenchmarkHTTPDeniedFiber3: the Fiber rows of
// http_added_test.go and http_denied_test.go on Fiber v3 (fiber3mw against
// Fiber v3's own middleware/limiter), through the same harness: allowed
// requests as the time a middleware adds over the bare app, denied requests
// as whole requests.
//
//	go test -run '^$' -bench 'HTTP(Added|Denied)Fiber3' -benchmem -count 5 ./benchmarks

import (
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	fiber3limiter "github.com/gofiber/fiber/v3/middleware/limiter"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/ratewarden/ratewarden/fiber3mw"
)

// fiber3Row is one middleware of the Fiber v3 rows, built afresh for its run.
type fiber3Row struct {
	name string
	make func(b *testing.B) fiber.Handler
}

// fiber3App is a Fiber v3 app answering GET / with "ok" behind mw.
func fiber3App(mw ...fiber.Handler) fasthttp.RequestHandler {
	a := fiber.New()
	for _, m := range mw {
		a.Use(m)
	}
	a.Get("/", func(c fiber.Ctx) error { return c.SendString("ok") })
	return a.Handler()
}

// fiber3AddedRows are Fiber v3's own limiter, the floor (the five header
// fields ratewarden sets, constant, no limiter), and ratewarden's
// configurations, each admitting every request.
func fiber3AddedRows() []fiber3Row {
	rows := []fiber3Row{
		{"fiber-limiter", func(*testing.B) fiber.Handler {
			return fiber3limiter.New(fiber3limiter.Config{Max: 1 << 30, Expiration: time.Minute})
		}},
		{"floor-5-headers", func(*testing.B) fiber.Handler {
			return func(c fiber.Ctx) error {
				h := &c.Response().Header
				for _, f := range fiveFields {
					h.SetCanonical([]byte(f.name), []byte(f.values[0]))
				}
				return c.Next()
			}
		}},
	}
	for _, v := range rwVariants {
		rows = append(rows, fiber3Row{v.name, func(b *testing.B) fiber.Handler {
			m, err := fiber3mw.New(benchLimiter(b), v.opts...)
			require.NoError(b, err)
			return m
		}})
	}
	return rows
}

// BenchmarkHTTPAddedFiber3 is BenchmarkHTTPAdded's Fiber rows on Fiber v3:
// Fiber3 calls the app's handler directly, Fiber3Server goes through
// fasthttp's server loop, which also writes every header line out.
func BenchmarkHTTPAddedFiber3(b *testing.B) {
	for _, m := range fiber3AddedRows() {
		b.Run("Fiber3/"+m.name, func(b *testing.B) {
			bare, _ := serveFastHandler(fiber3App())
			wrapped, code := serveFastHandler(fiber3App(m.make(b)))
			b.ReportAllocs()
			added(b, bare, wrapped, 1, code)
		})
	}
	for _, m := range fiber3AddedRows() {
		b.Run("Fiber3Server/"+m.name, func(b *testing.B) {
			bare, _ := serveFast(fiber3App())
			wrapped, code := serveFast(fiber3App(m.make(b)))
			b.ReportAllocs()
			added(b, bare, wrapped, fastBatch, code)
		})
	}
}

// fiber3DeniedRows are Fiber v3's own limiter and ratewarden's
// configurations, each admitting one request an hour per client IP.
func fiber3DeniedRows() []fiber3Row {
	rows := []fiber3Row{{"fiber-limiter", func(*testing.B) fiber.Handler {
		return fiber3limiter.New(fiber3limiter.Config{Max: 1, Expiration: time.Hour})
	}}}
	for _, v := range rwVariants {
		rows = append(rows, fiber3Row{v.name, func(b *testing.B) fiber.Handler {
			m, err := fiber3mw.New(deniedLimiter(b), v.opts...)
			require.NoError(b, err)
			return m
		}})
	}
	return rows
}

// BenchmarkHTTPDeniedFiber3 is BenchmarkHTTPDenied on Fiber v3: whole denied
// requests, the handler called directly (Fiber3) and through fasthttp's
// server loop, 16 pipelined requests a call (Fiber3Server).
func BenchmarkHTTPDeniedFiber3(b *testing.B) {
	for _, m := range fiber3DeniedRows() {
		b.Run("Fiber3/"+m.name, func(b *testing.B) {
			serve, code := serveFastHandler(fiber3App(m.make(b)))
			runDenied(b, serve, code, 1)
		})
	}
	for _, m := range fiber3DeniedRows() {
		b.Run("Fiber3Server/"+m.name, func(b *testing.B) {
			serve, code := serveFast(fiber3App(m.make(b)))
			runDenied(b, serve, code, fastBatch)
		})
	}
}
