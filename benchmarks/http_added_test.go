package benchmarks

// BenchmarkHTTPAdded: the time a middleware adds to an allowed request over
// the bare handler, per framework, measured in alternating blocks (see
// http_test.go), and the floor-5-headers rows: what setting ratewarden's five
// header fields costs by itself.
//
//	go test -run '^$' -bench HTTPAdded -benchmem -count 5 ./benchmarks

import (
	"net/http"
	"slices"
	"testing"
	"time"

	svhttplimit "github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/didip/tollbooth/v7"
	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/labstack/echo/v4"
	echomiddleware "github.com/labstack/echo/v4/middleware"
	ulule "github.com/ulule/limiter/v3"
	ulgin "github.com/ulule/limiter/v3/drivers/middleware/gin"
	ulstdlib "github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/fibermw"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// added reports the median time wrapped adds to bare, per request, measured
// in alternating blocks. bare and wrapped serve perCall requests a call.
func added(b *testing.B, bare, wrapped func(), perCall int, code func() int) {
	const block = 64
	diffs := make([]float64, 0, b.N/block+1)
	for i := 0; i*block*perCall < b.N; i++ {
		first, second := bare, wrapped
		if i%2 == 1 {
			first, second = wrapped, bare
		}
		t0 := time.Now()
		for range block {
			first()
		}
		t1 := time.Now()
		for range block {
			second()
		}
		t2 := time.Now()
		d := float64(t2.Sub(t1)-t1.Sub(t0)) / float64(block*perCall)
		if i%2 == 1 {
			d = -d
		}
		diffs = append(diffs, d)
	}
	if c := code(); c != 200 {
		b.Fatalf("status %d, want 200", c)
	}
	slices.Sort(diffs)
	b.ReportMetric(diffs[len(diffs)/2], "added-ns/op")
}

// addedRow is one middleware of BenchmarkHTTPAdded on a net/http-shaped
// framework, built afresh for its run.
type addedRow struct {
	name string
	make func(b *testing.B) http.Handler
}

// fiberRow is one middleware of BenchmarkHTTPAdded on Fiber.
type fiberRow struct {
	name string
	make func(b *testing.B) fiber.Handler
}

func BenchmarkHTTPAdded(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	frameworks := []struct {
		name string
		bare http.Handler
		rows []addedRow
	}{
		{"Stdlib", http.HandlerFunc(okHandler), stdlibAddedRows()},
		{"Gin", ginEngine(), ginAddedRows()},
		{"Echo", echoApp(), echoAddedRows()},
	}
	for _, fw := range frameworks {
		for _, m := range fw.rows {
			b.Run(fw.name+"/"+m.name, func(b *testing.B) {
				bare, _ := serve(fw.bare)
				wrapped, code := serve(m.make(b))
				added(b, bare, wrapped, 1, code)
			})
		}
	}
	// Fiber: the handler called directly, as the net/http rows call theirs
	// (the response is never written out). FiberServer: through fasthttp's
	// server loop, which also writes every header line out.
	for _, m := range fiberAddedRows() {
		b.Run("Fiber/"+m.name, func(b *testing.B) {
			bare, _ := serveFastHandler(fiberApp())
			wrapped, code := serveFastHandler(fiberApp(m.make(b)))
			added(b, bare, wrapped, 1, code)
		})
	}
	for _, m := range fiberAddedRows() {
		b.Run("FiberServer/"+m.name, func(b *testing.B) {
			bare, _ := serveFast(fiberApp())
			wrapped, code := serveFast(fiberApp(m.make(b)))
			added(b, bare, wrapped, fastBatch, code)
		})
	}
}

// ginEngine is a Gin engine answering GET / with "ok" behind mw.
func ginEngine(mw ...gin.HandlerFunc) *gin.Engine {
	r := gin.New()
	r.Use(mw...)
	r.GET("/", func(c *gin.Context) { c.String(200, "ok") })
	return r
}

// echoApp is an Echo app answering GET / with "ok" behind mw.
func echoApp(mw ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(mw...)
	e.GET("/", func(c echo.Context) error { return c.String(200, "ok") })
	return e
}

func stdlibAddedRows() []addedRow {
	std := http.HandlerFunc(okHandler)
	rows := []addedRow{
		{"floor-5-headers", func(*testing.B) http.Handler { return fiveHeaders(std) }},
		{"ulule", func(*testing.B) http.Handler {
			return ulstdlib.NewMiddleware(ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: 1 << 40})).Handler(std)
		}},
		{"httprate", func(*testing.B) http.Handler { return httprateByIP()(std) }},
		{"tollbooth", func(*testing.B) http.Handler {
			lmt := tollbooth.NewLimiter(1<<40, nil)
			lmt.SetIPLookups([]string{"RemoteAddr"})
			return tollbooth.LimitHandler(lmt, std)
		}},
		{"sethvargo-httplimit", func(b *testing.B) http.Handler {
			st, err := memorystore.New(sethvargoConfig)
			if err != nil {
				b.Fatal(err)
			}
			m, err := svhttplimit.NewMiddleware(st, svhttplimit.IPKeyFunc())
			if err != nil {
				b.Fatal(err)
			}
			return m.Handle(std)
		}},
	}
	for _, v := range rwVariants {
		rows = append(rows, addedRow{v.name, func(b *testing.B) http.Handler {
			m, err := stdhttp.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return m(std)
		}})
	}
	return rows
}

func ginAddedRows() []addedRow {
	rows := []addedRow{
		{"floor-5-headers", func(*testing.B) http.Handler {
			return ginEngine(func(c *gin.Context) { setFiveHeaders(c.Writer.Header()) })
		}},
		{"ulule", func(*testing.B) http.Handler {
			return ginEngine(ulgin.NewMiddleware(ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: 1 << 40})))
		}},
	}
	for _, v := range rwVariants {
		rows = append(rows, addedRow{v.name, func(b *testing.B) http.Handler {
			m, err := ginmw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return ginEngine(m)
		}})
	}
	return rows
}

func echoAddedRows() []addedRow {
	rows := []addedRow{
		{"floor-5-headers", func(*testing.B) http.Handler {
			return echoApp(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					setFiveHeaders(c.Response().Header())
					return next(c)
				}
			})
		}},
		{"echo-ratelimiter", func(*testing.B) http.Handler {
			return echoApp(echomiddleware.RateLimiter(echomiddleware.NewRateLimiterMemoryStoreWithConfig(
				echomiddleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(1 << 40), Burst: 1 << 30})))
		}},
	}
	for _, v := range rwVariants {
		rows = append(rows, addedRow{v.name, func(b *testing.B) http.Handler {
			m, err := echomw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return echoApp(m)
		}})
	}
	return rows
}

func fiberAddedRows() []fiberRow {
	rows := []fiberRow{
		{"fiber-limiter", func(*testing.B) fiber.Handler {
			return fiberlimiter.New(fiberlimiter.Config{Max: 1 << 30, Expiration: time.Minute})
		}},
		{"floor-5-headers", func(*testing.B) fiber.Handler {
			return func(c *fiber.Ctx) error {
				h := &c.Response().Header
				for _, f := range fiveFields {
					h.SetCanonical([]byte(f.name), []byte(f.values[0]))
				}
				return c.Next()
			}
		}},
	}
	for _, v := range rwVariants {
		rows = append(rows, fiberRow{v.name, func(b *testing.B) fiber.Handler {
			m, err := fibermw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return m
		}})
	}
	return rows
}

// fiveHeaders is the floor of the net/http rows: a middleware that only sets
// the five header fields ratewarden sets on an allowed request, to constant
// values, with no limiter and no formatting. What the map inserts, and the
// copy of the map every ResponseWriter takes on WriteHeader, cost per field,
// every middleware pays per header it sets. The Gin and Echo rows of the same
// name do the same from their frameworks' middleware.
func fiveHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setFiveHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

// fiveFields are fiveHeaders's fields: what ratewarden would send.
var fiveFields = [...]struct {
	name   string
	values []string
}{
	{httplimit.HeaderXRateLimitLimit, []string{"1000000"}},
	{httplimit.HeaderXRateLimitRemain, []string{"999999"}},
	{httplimit.HeaderXRateLimitReset, []string{"1"}},
	{httplimit.HeaderRateLimitPolicy, []string{`"default";q=1000000;w=1`}},
	{httplimit.HeaderRateLimit, []string{`"default";r=999999;t=1`}},
}

func setFiveHeaders(h http.Header) {
	for _, f := range fiveFields {
		h[f.name] = f.values
	}
}
