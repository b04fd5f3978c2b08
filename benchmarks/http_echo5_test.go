package benchmarks

// Echo v5's rows: BenchmarkHTTPEcho5 times whole allowed requests, as
// BenchmarkHTTPEcho does for Echo v4; BenchmarkHTTPAddedEcho5 the time a
// middleware adds over the bare app, as BenchmarkHTTPAdded's Echo rows do;
// BenchmarkHTTPDeniedEcho5 whole denied requests, as BenchmarkHTTPDenied's
// Fiber rows do. Against ratewarden's echo5mw: Echo v5's own
// middleware.RateLimiter on its memory store (golang.org/x/time/rate per
// client, keyed by c.RealIP(), the peer here; it sets X-RateLimit-Limit and
// X-RateLimit-Remaining, and Retry-After on a denial), and the floor: a
// middleware that only sets ratewarden's five header fields.
//
//	go test -run '^$' -bench 'Echo5' -benchmem -count 5 ./benchmarks

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	echo5middleware "github.com/labstack/echo/v5/middleware"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
)

// echo5App is an Echo v5 app answering GET / with "ok" behind mw.
func echo5App(mw ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(mw...)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "ok") })
	return e
}

// echo5Floor is the floor row: a middleware that only sets the five header
// fields ratewarden sets on an allowed request (see fiveHeaders).
var echo5Floor = addedRow{"floor-5-headers", func(*testing.B) http.Handler {
	return echo5App(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			setFiveHeaders(c.Response().Header())
			return next(c)
		}
	})
}}

// echo5Limiters are the limiting rows: Echo v5's own RateLimiter on its
// memory store with echoRate a second and echoBurst, and ratewarden's
// configurations on lim(b).
func echo5Limiters(lim func(*testing.B) *core.Limiter, echoRate float64, echoBurst int) []addedRow {
	rows := []addedRow{{"echo5-ratelimiter", func(*testing.B) http.Handler {
		return echo5App(echo5middleware.RateLimiter(echo5middleware.NewRateLimiterMemoryStoreWithConfig(
			echo5middleware.RateLimiterMemoryStoreConfig{Rate: echoRate, Burst: echoBurst, ExpiresIn: time.Hour})))
	}}}
	for _, v := range rwVariants {
		rows = append(rows, addedRow{v.name, func(b *testing.B) http.Handler {
			m, err := echo5mw.New(lim(b), v.opts...)
			require.NoError(b, err)
			return echo5App(m)
		}})
	}
	return rows
}

// echo5AllowedRows are the floor and the limiters, which never deny during a
// benchmark.
func echo5AllowedRows() []addedRow {
	return append([]addedRow{echo5Floor}, echo5Limiters(benchLimiter, 1<<40, 1<<30)...)
}

// BenchmarkHTTPEcho5 times whole allowed requests through Echo v5, the bare
// app first: subtract it for what a middleware adds.
func BenchmarkHTTPEcho5(b *testing.B) {
	b.Run("bare", func(b *testing.B) { runHandler(b, echo5App()) })
	for _, m := range echo5AllowedRows() {
		b.Run(m.name, func(b *testing.B) { runHandler(b, m.make(b)) })
	}
}

// BenchmarkHTTPAddedEcho5 is BenchmarkHTTPAdded's Echo rows on Echo v5: the
// median time a middleware adds to an allowed request, in alternating
// blocks of bare and wrapped requests.
func BenchmarkHTTPAddedEcho5(b *testing.B) {
	for _, m := range echo5AllowedRows() {
		b.Run("Echo5/"+m.name, func(b *testing.B) {
			bare, _ := serve(echo5App())
			wrapped, code := serve(m.make(b))
			added(b, bare, wrapped, 1, code)
		})
	}
}

// BenchmarkHTTPDeniedEcho5 times whole denied requests through Echo v5:
// every row admits one request an hour per client IP, spent before the timer
// starts, and fails unless its last answer was 429.
func BenchmarkHTTPDeniedEcho5(b *testing.B) {
	for _, m := range echo5Limiters(deniedLimiter, 1.0/3600, 1) {
		b.Run("Echo5/"+m.name, func(b *testing.B) {
			serve, code := serve(m.make(b))
			runDenied(b, serve, code, 1)
		})
	}
}
