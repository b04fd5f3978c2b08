package echo5mw_test

import (
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line form: 100 requests a minute per client IP in front of every
// route of an Echo v5 app.
func ExamplePerIP() {
	e := echo.New()
	e.Use(echo5mw.PerIP("100/m")) // 100 requests a minute per client IP
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello\n") })

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Print(rec.Code, " ", rec.Header().Get("RateLimit-Policy"), " ", rec.Body.String())
	// Output:
	// 200 "default";q=100;w=60 hello
}

// The full constructor: a limiter of your own (algorithm, limit, store), then
// the middleware.
func ExampleNew_limiter() {
	store, err := memory.New() // in-process and bounded; Close stops its sweeper
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lim, err := core.NewLimiter(store, core.TokenBucket, core.PerSecond(10).WithBurst(20)) // or core.ParseLimit("10/s burst 20")
	if err != nil {
		log.Fatal(err)
	}
	mw, err := echo5mw.New(lim)
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello\n") })

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Print(rec.Code, " ", rec.Header().Get("X-RateLimit-Remaining"), " ", rec.Body.String())
	// Output:
	// 200 19 hello
}

// Two requests a minute per client IP in front of an Echo route that reports
// the quota left.
func ExampleNew() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	mw, err := echo5mw.New(lim, httplimit.WithDecisionInContext())
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error {
		d, _ := echo5mw.DecisionFrom(c)
		return c.String(200, fmt.Sprintf("hello, %d left\n", d.Remaining))
	})

	for range 3 {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:4321"
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Header().Get("RateLimit"), " ", rec.Body.String())
	}
	// Output:
	// 200 "default";r=1;t=60 hello, 1 left
	// 200 "default";r=0;t=60 hello, 0 left
	// 429 "default";r=0;t=60 Too Many Requests
}
