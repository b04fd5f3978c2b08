package benchmarks

// BenchmarkHTTPDeniedAdapters and BenchmarkHTTPDeniedFlood: the denied path
// through every adapter, the path a client that keeps sending past its quota
// (or an attack on one key) takes on nearly every request.
//
// BenchmarkHTTPDeniedAdapters times whole denied requests, one goroutine,
// per framework: the framework's own limiter where it has one, ratewarden
// with the header fields closest to that limiter's, and ratewarden with every
// field (the default). What each sends on a denial:
//
//   - Fiber v2 and v3 `limiter`: Retry-After and "Too Many Requests";
//     ratewarden with WithHeaders(0) sends the same field and body
//     ("retry-after" rows), after reading Accept to choose between that body
//     and problem details, which Fiber's limiter does not do; with
//     WithBodyFormat(TextBody) too it reads no Accept, as Fiber's limiter
//     ("retry-after-text" rows, every framework).
//   - Echo v5 `RateLimiter` (memory store): X-RateLimit-Limit,
//     X-RateLimit-Remaining, Retry-After and a JSON error; ratewarden with
//     WithHeaders(XRateLimitHeaders) sends those and X-RateLimit-Reset
//     ("x-ratelimit" rows).
//   - Echo v4 `RateLimiter`: no field, a JSON error; ratewarden's fewest is
//     Retry-After alone.
//   - net/http and Gin have no limiter of their own: the floor rows are a
//     middleware that writes the same 429 as ratewarden's default (six
//     constant fields and the body) without deciding anything.
//
// Every row admits one request an hour per client IP, spent before the
// timer starts, and fails unless its last answer was 429. A row is first
// warmed up with warmUpRequests denials (see warmUp). In instructions, a
// row's request costs (Ir(102000x) - Ir(2000x)) / 100000, each total read
// from its own run under valgrind:
//
//	cd benchmarks && go test -c -o /tmp/b.test . &&
//	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
//	  --callgrind-out-file=/dev/null /tmp/b.test -test.run '^$' \
//	  -test.bench '^BenchmarkHTTPDeniedAdapters$/^Fiber$/^fiber-limiter$' -test.benchtime 2000x
//
// BenchmarkHTTPDeniedFlood is a flood of denials of one key: 64 goroutines
// (b.SetParallelism on GOMAXPROCS) send requests from the same client IP, each
// goroutine through its own recorder or RequestCtx, every request denied.
//
//	go test -run '^$' -bench 'HTTPDenied(Adapters|Flood)' -benchmem -count 5 ./benchmarks

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	fiber3limiter "github.com/gofiber/fiber/v3/middleware/limiter"
	echomiddleware "github.com/labstack/echo/v4/middleware"
	echo5middleware "github.com/labstack/echo/v5/middleware"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/fibermw"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// deniedVariants are ratewarden's header settings in the denied rows.
var deniedVariants = []struct {
	name string
	opts []httplimit.Option
}{
	{"ratewarden-all-fields", nil},
	{"ratewarden-x-ratelimit", []httplimit.Option{httplimit.WithHeaders(httplimit.XRateLimitHeaders)}},
	{"ratewarden-retry-after", []httplimit.Option{httplimit.WithHeaders(0)}},
	{"ratewarden-retry-after-text", []httplimit.Option{httplimit.WithHeaders(0), httplimit.WithBodyFormat(httplimit.TextBody)}},
}

// deniedFloorFields are the six fields of ratewarden's default 429 on a
// limit named "1/h" of one request an hour: what the floor rows write.
var deniedFloorFields = [...][2]string{
	{httplimit.HeaderRetryAfter, "3600"},
	{httplimit.HeaderXRateLimitLimit, "1"},
	{httplimit.HeaderXRateLimitRemain, "0"},
	{httplimit.HeaderXRateLimitReset, "3600"},
	{httplimit.HeaderRateLimitPolicy, `"1/h";q=1;w=3600`},
	{httplimit.HeaderRateLimit, `"1/h";r=0;t=3600`},
}

var deniedFloorBody = []byte("Too Many Requests\n")

// deniedFloor answers every request as ratewarden's default denial does,
// with constant values and no limiter.
func deniedFloor(http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		for _, f := range deniedFloorFields {
			h[f[0]] = []string{f[1]}
		}
		h["Content-Type"] = []string{httplimit.ContentTypeTextPlain}
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write(deniedFloorBody)
	})
}

// deniedAdapterRows are the denied rows of net/http, Gin, Echo v4 and Echo
// v5, framework-prefixed.
func deniedAdapterRows() []addedRow {
	gin.SetMode(gin.ReleaseMode)
	rows := []addedRow{
		{"Stdlib/floor-all-fields", func(*testing.B) http.Handler { return deniedFloor(nil) }},
		{"Gin/floor-all-fields", func(*testing.B) http.Handler {
			return ginEngine(func(c *gin.Context) { deniedFloor(nil).ServeHTTP(c.Writer, c.Request); c.Abort() })
		}},
		{"Echo/echo-ratelimiter", func(*testing.B) http.Handler {
			return echoApp(echomiddleware.RateLimiter(echomiddleware.NewRateLimiterMemoryStoreWithConfig(
				echomiddleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(1.0 / 3600), Burst: 1, ExpiresIn: time.Hour})))
		}},
		{"Echo5/echo5-ratelimiter", func(*testing.B) http.Handler {
			return echo5App(echo5middleware.RateLimiter(echo5middleware.NewRateLimiterMemoryStoreWithConfig(
				echo5middleware.RateLimiterMemoryStoreConfig{Rate: 1.0 / 3600, Burst: 1, ExpiresIn: time.Hour})))
		}},
	}
	for _, v := range deniedVariants {
		rows = append(rows,
			addedRow{"Stdlib/" + v.name, func(b *testing.B) http.Handler {
				mw, err := stdhttp.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return mw(http.HandlerFunc(okHandler))
			}},
			addedRow{"Gin/" + v.name, func(b *testing.B) http.Handler {
				mw, err := ginmw.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return ginEngine(mw)
			}},
			addedRow{"Echo/" + v.name, func(b *testing.B) http.Handler {
				mw, err := echomw.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return echoApp(mw)
			}},
			addedRow{"Echo5/" + v.name, func(b *testing.B) http.Handler {
				mw, err := echo5mw.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return echo5App(mw)
			}})
	}
	return rows
}

// fastDeniedRow is a fasthttp-served row: Fiber v2 or v3.
type fastDeniedRow struct {
	name string
	make func(b *testing.B) fasthttp.RequestHandler
}

// fastDeniedRows are the denied rows of Fiber v2 and v3, framework-prefixed.
func fastDeniedRows() []fastDeniedRow {
	rows := []fastDeniedRow{
		{"Fiber/fiber-limiter", func(*testing.B) fasthttp.RequestHandler {
			return fiberApp(fiberlimiter.New(fiberlimiter.Config{Max: 1, Expiration: time.Hour}))
		}},
		{"Fiber3/fiber-limiter", func(*testing.B) fasthttp.RequestHandler {
			return fiber3App(fiber3limiter.New(fiber3limiter.Config{Max: 1, Expiration: time.Hour}))
		}},
	}
	for _, v := range deniedVariants {
		rows = append(rows,
			fastDeniedRow{"Fiber/" + v.name, func(b *testing.B) fasthttp.RequestHandler {
				m, err := fibermw.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return fiberApp(m)
			}},
			fastDeniedRow{"Fiber3/" + v.name, func(b *testing.B) fasthttp.RequestHandler {
				m, err := fiber3mw.New(deniedLimiter(b), v.opts...)
				require.NoError(b, err)
				return fiber3App(m)
			}})
	}
	return rows
}

// BenchmarkHTTPDeniedAdapters times whole denied requests through every
// adapter, one goroutine (see the file comment for the rows).
func BenchmarkHTTPDeniedAdapters(b *testing.B) {
	for _, m := range deniedAdapterRows() {
		b.Run(m.name, func(b *testing.B) {
			serve, code := serve(m.make(b))
			warmUp(m.name, serve)
			runDenied(b, serve, code, 1)
		})
	}
	for _, m := range fastDeniedRows() {
		b.Run(m.name, func(b *testing.B) {
			serve, code := serveFastHandler(m.make(b))
			warmUp(m.name, serve)
			runDenied(b, serve, code, 1)
		})
	}
}

// warmUpRequests is the number of requests a row serves before it is first
// timed.
const warmUpRequests = 50_000

// warmedUp are the rows warmUp served, by name.
var warmedUp = map[string]bool{}

// warmUp serves warmUpRequests requests the first time row runs in the
// process, so that it is timed as a running server answers, not as a process
// that has just started: Go's runtime fills a call site's cache of interface
// type assertions only at random, about once in 1,024 misses, and until it
// does every assertion of a middleware (its optional interfaces, the
// framework's own) is a runtime call of about 90 instructions. Instruction
// counts of the rows (callgrind; a request's is the difference of two runs'
// totals over their difference in requests) otherwise depend on when those
// caches happen to be filled. Once per row: the caches outlive the app.
func warmUp(row string, serve func()) {
	if warmedUp[row] {
		return
	}
	warmedUp[row] = true
	for range warmUpRequests {
		serve()
	}
}

// floodGoroutines is the number of goroutines of a flood row.
const floodGoroutines = 64

// BenchmarkHTTPDeniedFlood floods each adapter with denials of one key:
// floodGoroutines goroutines, one client IP, every request denied (the
// floor rows answer without a limiter and are left out).
func BenchmarkHTTPDeniedFlood(b *testing.B) {
	for _, m := range deniedAdapterRows() {
		if m.name == "Stdlib/floor-all-fields" || m.name == "Gin/floor-all-fields" {
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			h := m.make(b)
			runDeniedFlood(b, func() (func(), func() int) { return serve(h) })
		})
	}
	for _, m := range fastDeniedRows() {
		b.Run(m.name, func(b *testing.B) {
			h := m.make(b)
			runDeniedFlood(b, func() (func(), func() int) { return serveFastHandler(h) })
		})
	}
}

// runDeniedFlood spends the key's quota, then serves b.N requests from
// floodGoroutines goroutines, each with the server of its own that newServe
// returns, and fails unless every goroutine's last answer was 429.
func runDeniedFlood(b *testing.B, newServe func() (func(), func() int)) {
	first, _ := newServe()
	first()
	b.SetParallelism(max(1, floodGoroutines/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		serve, code := newServe()
		served := false
		for pb.Next() {
			serve()
			served = true
		}
		if c := code(); served && c != fasthttp.StatusTooManyRequests {
			b.Errorf("status %d, want 429", c)
		}
	})
}
