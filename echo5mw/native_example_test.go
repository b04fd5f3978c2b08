package echo5mw_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// exampleLimiter allows one request a minute per key, on a memory store and
// a clock that stands still.
func exampleLimiter() *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	if err != nil {
		panic(err)
	}
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	return lim
}

// send serves GET / from peer with header pairs kv and prints the status
// and body.
func send(e *echo.Echo, peer string, kv ...string) {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = peer
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
}

// A skip that reads what the authentication middleware stored with c.Set,
// through the *echo.Context: admins are not limited.
func ExampleNative() {
	mw, err := echo5mw.New(exampleLimiter(), httplimit.WithSkip(func(r keyfuncs.Request) bool {
		c, ok := echo5mw.Native(r)
		return ok && c.Get("role") == "admin"
	}))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			c.Set("role", c.Request().Header.Get("X-Role")) // stands for real authentication
			return next(c)
		}
	}, mw)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello\n") })

	send(e, "192.0.2.1:1234", "X-Role", "admin")
	send(e, "192.0.2.1:1234", "X-Role", "admin")
	send(e, "192.0.2.1:1234")
	send(e, "192.0.2.1:1234")
	// Output:
	// 200 hello
	// 200 hello
	// 200 hello
	// 429 Too Many Requests
}

// Key by the signed-in user, which the authentication middleware stored with
// c.Set("user", id) before the limiter runs.
func Example_contextValue() {
	user, err := keyfuncs.ContextValue("user")
	if err != nil {
		panic(err)
	}
	mw, err := echo5mw.New(exampleLimiter(), httplimit.WithKey(user))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			if u := c.Request().Header.Get("X-User"); u != "" { // stands for real authentication
				c.Set("user", u)
			}
			return next(c)
		}
	}, mw)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello\n") })

	send(e, "192.0.2.1:1234", "X-User", "alice")
	send(e, "192.0.2.1:1234", "X-User", "alice")
	send(e, "192.0.2.1:1234", "X-User", "bob")
	send(e, "192.0.2.1:1234")
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
	// 401 Unauthorized
}

// Key by Echo's c.RealIP(), with an IPExtractor that believes
// X-Forwarded-For only from private, loopback and link-local peers (without
// an IPExtractor Echo v5 takes the peer's address and reads no header).
func Example_frameworkIP() {
	key, err := keyfuncs.FrameworkIP()
	if err != nil {
		panic(err)
	}
	mw, err := echo5mw.New(exampleLimiter(), httplimit.WithKey(key))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.IPExtractor = echo.ExtractIPFromXFFHeader()
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello "+c.RealIP()+"\n") })

	send(e, "10.0.0.7:1234", "X-Forwarded-For", "203.0.113.9")
	send(e, "10.0.0.8:1234", "X-Forwarded-For", "203.0.113.9")
	send(e, "10.0.0.7:1234", "X-Forwarded-For", "203.0.113.10")
	send(e, "198.51.100.4:1234", "X-Forwarded-For", "203.0.113.11")
	// Output:
	// 200 hello 203.0.113.9
	// 429 Too Many Requests
	// 200 hello 203.0.113.10
	// 200 hello 198.51.100.4
}
