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
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	svhttplimit "github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/didip/tollbooth/v7"
	"github.com/gin-gonic/gin"
	"github.com/go-chi/httprate"
	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
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
	engine := ginEngine
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
	app := echoApp
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
// connection), and a check of the last batch's answers: their status when
// all fastBatch share one, else 0. Going through the
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
	}, func() int { return batchStatus(c.out.Bytes()) }
}

// batchStatus reads fastBatch responses from out and returns their status
// when they all share one, else 0.
func batchStatus(out []byte) int {
	br := bufio.NewReader(bytes.NewReader(out))
	var resp fasthttp.Response
	status := 0
	for i := range fastBatch {
		if err := resp.Read(br); err != nil {
			return 0
		}
		if i > 0 && resp.StatusCode() != status {
			return 0
		}
		status = resp.StatusCode()
	}
	return status
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
