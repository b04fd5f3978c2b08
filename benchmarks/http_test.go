package benchmarks

// The overhead of rate-limit middleware on an allowed request, per framework:
// each framework's bare handler and the same handler behind ratewarden's
// middleware and behind the peers' middleware, in the same run, called
// directly (no network). Limits are high enough that every request passes; a
// benchmark fails if its last request was not answered 200.
//
// BenchmarkHTTP<Framework>/<middleware> report ns/op and allocs/op of whole
// requests; subtract the "bare" line for what a middleware adds. On a busy
// machine whole-request times drift by more than the overhead being measured,
// so BenchmarkHTTPAdded/<Framework>/<middleware> measures the added time
// directly: it alternates blocks of 64 bare and 64 wrapped requests (swapping
// their order every block) and reports the median difference per request as
// added-ns/op.
//
//	go test -run '^$' -bench '^BenchmarkHTTP' -benchmem -count 5 ./benchmarks

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	svhttplimit "github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/didip/tollbooth/v7"
	"github.com/gin-gonic/gin"
	"github.com/go-chi/httprate"
	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/labstack/echo/v4"
	echomiddleware "github.com/labstack/echo/v4/middleware"
	ulule "github.com/ulule/limiter/v3"
	ulgin "github.com/ulule/limiter/v3/drivers/middleware/gin"
	ulstdlib "github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/fibermw"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

const benchPeer = "192.0.2.1:1234"

// rwVariants are ratewarden's configurations: the default (every header on),
// headers off, and the default plus the decision in the request context.
var rwVariants = []struct {
	name string
	opts []httplimit.Option
}{
	{"ratewarden", nil},
	{"ratewarden-noheaders", []httplimit.Option{httplimit.WithHeaders(0)}},
	{"ratewarden-context", []httplimit.Option{httplimit.WithDecisionInContext()}},
}

// benchLimiter returns a GCRA limiter on a memory store that admits every
// request a benchmark can send.
func benchLimiter(b *testing.B) *core.Limiter {
	b.Helper()
	st, err := memory.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40))
	if err != nil {
		b.Fatal(err)
	}
	return lim
}

// sethvargoConfig never denies during a benchmark. Its memory store refills
// interval/tokens tokens (in nanoseconds) per elapsed interval, which is 0 for
// 1<<40 tokens a second: the bucket would empty at the first second's end and
// the benchmark fail. Over an hour no interval ends during a run.
var sethvargoConfig = &memorystore.Config{Tokens: 1 << 40, Interval: time.Hour}

func runHandler(b *testing.B, h http.Handler) {
	b.Helper()
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = benchPeer
	var w *httptest.ResponseRecorder
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, req)
	}
	b.StopTimer()
	if w.Code != 200 {
		b.Fatalf("status %d, want 200", w.Code)
	}
}

// httprateByIP is httprate keyed by the peer's IP, as its deprecated
// LimitByIP does (this file states the same trust model for every limiter:
// the peer address, no proxies).
func httprateByIP() func(http.Handler) http.Handler {
	return httprate.LimitBy(1<<40, time.Second, func(r *http.Request) (string, error) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return "", err
		}
		return httprate.CanonicalizeIP(host), nil
	})
}

func okHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

func BenchmarkHTTPStdlib(b *testing.B) {
	bare := http.HandlerFunc(okHandler)
	b.Run("bare", func(b *testing.B) { runHandler(b, bare) })
	for _, v := range rwVariants {
		b.Run(v.name, func(b *testing.B) {
			mw, err := stdhttp.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			runHandler(b, mw(bare))
		})
	}
	b.Run("ulule", func(b *testing.B) {
		lim := ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: 1 << 40})
		runHandler(b, ulstdlib.NewMiddleware(lim).Handler(bare))
	})
	b.Run("httprate", func(b *testing.B) {
		runHandler(b, httprateByIP()(bare))
	})
	b.Run("tollbooth", func(b *testing.B) {
		lmt := tollbooth.NewLimiter(1<<40, nil)
		lmt.SetIPLookups([]string{"RemoteAddr"})
		runHandler(b, tollbooth.LimitHandler(lmt, bare))
	})
	b.Run("sethvargo-httplimit", func(b *testing.B) {
		st, err := memorystore.New(sethvargoConfig)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close(b.Context()) })
		mw, err := svhttplimit.NewMiddleware(st, svhttplimit.IPKeyFunc())
		if err != nil {
			b.Fatal(err)
		}
		runHandler(b, mw.Handle(bare))
	})
}

func BenchmarkHTTPGin(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	ok := func(c *gin.Context) { c.String(200, "ok") }
	engine := func(mw ...gin.HandlerFunc) *gin.Engine {
		r := gin.New()
		r.Use(mw...)
		r.GET("/", ok)
		return r
	}
	b.Run("bare", func(b *testing.B) { runHandler(b, engine()) })
	for _, v := range rwVariants {
		b.Run(v.name, func(b *testing.B) {
			mw, err := ginmw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			runHandler(b, engine(mw))
		})
	}
	b.Run("ulule", func(b *testing.B) {
		lim := ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: 1 << 40})
		runHandler(b, engine(ulgin.NewMiddleware(lim)))
	})
}

func BenchmarkHTTPEcho(b *testing.B) {
	app := func(mw ...echo.MiddlewareFunc) *echo.Echo {
		e := echo.New()
		e.Use(mw...)
		e.GET("/", func(c echo.Context) error { return c.String(200, "ok") })
		return e
	}
	b.Run("bare", func(b *testing.B) { runHandler(b, app()) })
	for _, v := range rwVariants {
		b.Run(v.name, func(b *testing.B) {
			mw, err := echomw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			runHandler(b, app(mw))
		})
	}
	b.Run("echo-ratelimiter", func(b *testing.B) {
		runHandler(b, app(echomiddleware.RateLimiter(echomiddleware.NewRateLimiterMemoryStoreWithConfig(
			echomiddleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(1 << 40), Burst: 1 << 30}))))
	})
}

func BenchmarkHTTPFiber(b *testing.B) {
	app := fiberApp
	run := func(b *testing.B, h fasthttp.RequestHandler) {
		serve, code := serveFastHandler(h)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			serve()
		}
		b.StopTimer()
		if c := code(); c != 200 {
			b.Fatalf("status %d, want 200", c)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, app()) })
	for _, v := range rwVariants {
		b.Run(v.name, func(b *testing.B) {
			mw, err := fibermw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			run(b, app(mw))
		})
	}
	b.Run("fiber-limiter", func(b *testing.B) {
		run(b, app(fiberlimiter.New(fiberlimiter.Config{Max: 1 << 30, Expiration: time.Minute})))
	})
}

// serve returns a function serving one GET / to h, and a check of the last
// answer.
func serve(h http.Handler) (func(), func() int) {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = benchPeer
	w := httptest.NewRecorder()
	return func() {
			w = httptest.NewRecorder()
			h.ServeHTTP(w, req)
		}, func() int {
			return w.Code
		}
}

// fiberApp is a Fiber app answering GET / with "ok" behind mw.
func fiberApp(mw ...fiber.Handler) fasthttp.RequestHandler {
	a := fiber.New(fiber.Config{DisableStartupMessage: true})
	for _, m := range mw {
		a.Use(m)
	}
	a.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
	return a.Handler()
}

// serveFastHandler is serve for a fasthttp handler, called directly on one
// RequestCtx: no server, so no arrival time (RequestCtx.Time is zero) and no
// response written out.
func serveFastHandler(h fasthttp.RequestHandler) (func(), func() int) {
	ctx := new(fasthttp.RequestCtx)
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/")
	ctx.Init(&req, pipePeer, nil)
	return func() {
		ctx.Response.Reset()
		h(ctx)
	}, ctx.Response.StatusCode
}

// fastBatch is the number of pipelined requests serveFast sends per call.
const fastBatch = 16

// serveFast returns a function serving fastBatch pipelined GET / requests to h
// through fasthttp's own server loop (Server.ServeConn over an in-memory
// connection), and a check of the last batch's answers. Going through the
// server, not calling h directly, puts the server's per-request work in both
// the bare and the wrapped run, as in production: among it the arrival time
// fasthttp stamps on every request (RequestCtx.Time).
func serveFast(h fasthttp.RequestHandler) (func(), func() int) {
	srv := &fasthttp.Server{Handler: h, NoDefaultDate: true, NoDefaultServerHeader: true}
	c := &pipeConn{reqs: bytes.Repeat([]byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n"), fastBatch)}
	return func() {
			c.in.Reset(c.reqs)
			c.out.Reset()
			_ = srv.ServeConn(c)
		}, func() int {
			if n := bytes.Count(c.out.Bytes(), []byte("HTTP/1.1 200 OK\r\n")); n != fastBatch {
				return 0
			}
			return 200
		}
}

// pipeConn is a net.Conn from benchPeer that reads a fixed batch of requests
// and keeps what the server writes back.
type pipeConn struct {
	reqs []byte
	in   bytes.Reader
	out  bytes.Buffer
}

var pipePeer = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}

func (c *pipeConn) Read(p []byte) (int, error)     { return c.in.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error)    { return c.out.Write(p) }
func (*pipeConn) Close() error                     { return nil }
func (*pipeConn) LocalAddr() net.Addr              { return pipePeer }
func (*pipeConn) RemoteAddr() net.Addr             { return pipePeer }
func (*pipeConn) SetDeadline(time.Time) error      { return nil }
func (*pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (*pipeConn) SetWriteDeadline(time.Time) error { return nil }

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

func BenchmarkHTTPAdded(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	type mw struct {
		name string
		make func(b *testing.B) http.Handler
	}
	std := http.HandlerFunc(okHandler)
	ginEngine := func(mw ...gin.HandlerFunc) *gin.Engine {
		r := gin.New()
		r.Use(mw...)
		r.GET("/", func(c *gin.Context) { c.String(200, "ok") })
		return r
	}
	echoApp := func(mw ...echo.MiddlewareFunc) *echo.Echo {
		e := echo.New()
		e.Use(mw...)
		e.GET("/", func(c echo.Context) error { return c.String(200, "ok") })
		return e
	}
	frameworks := []struct {
		name string
		bare http.Handler
		mws  []mw
	}{
		{"Stdlib", std, []mw{
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
		}},
		{"Gin", ginEngine(), []mw{
			{"floor-5-headers", func(*testing.B) http.Handler {
				return ginEngine(func(c *gin.Context) { setFiveHeaders(c.Writer.Header()) })
			}},
			{"ulule", func(*testing.B) http.Handler {
				return ginEngine(ulgin.NewMiddleware(ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: 1 << 40})))
			}},
		}},
		{"Echo", echoApp(), []mw{
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
		}},
	}
	for _, v := range rwVariants {
		frameworks[0].mws = append(frameworks[0].mws, mw{v.name, func(b *testing.B) http.Handler {
			m, err := stdhttp.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return m(std)
		}})
		frameworks[1].mws = append(frameworks[1].mws, mw{v.name, func(b *testing.B) http.Handler {
			m, err := ginmw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return ginEngine(m)
		}})
		frameworks[2].mws = append(frameworks[2].mws, mw{v.name, func(b *testing.B) http.Handler {
			m, err := echomw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return echoApp(m)
		}})
	}
	for _, fw := range frameworks {
		for _, m := range fw.mws {
			b.Run(fw.name+"/"+m.name, func(b *testing.B) {
				bare, _ := serve(fw.bare)
				wrapped, code := serve(m.make(b))
				added(b, bare, wrapped, 1, code)
			})
		}
	}

	fiberMws := []struct {
		name string
		make func(b *testing.B) fiber.Handler
	}{
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
		fiberMws = append(fiberMws, struct {
			name string
			make func(b *testing.B) fiber.Handler
		}{v.name, func(b *testing.B) fiber.Handler {
			m, err := fibermw.New(benchLimiter(b), v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			return m
		}})
	}
	// Fiber: the handler called directly, as the net/http rows call theirs
	// (the response is never written out). FiberServer: through fasthttp's
	// server loop, which also writes every header line out.
	for _, m := range fiberMws {
		b.Run("Fiber/"+m.name, func(b *testing.B) {
			bare, _ := serveFastHandler(fiberApp())
			wrapped, code := serveFastHandler(fiberApp(m.make(b)))
			added(b, bare, wrapped, 1, code)
		})
	}
	for _, m := range fiberMws {
		b.Run("FiberServer/"+m.name, func(b *testing.B) {
			bare, _ := serveFast(fiberApp())
			wrapped, code := serveFast(fiberApp(m.make(b)))
			added(b, bare, wrapped, fastBatch, code)
		})
	}
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
