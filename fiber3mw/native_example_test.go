package fiber3mw_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
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

// send sends req and prints the status and body.
func send(do func(*http.Request) (*http.Response, error), req *http.Request, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
}

// clientRequest returns a GET request for url, for an http.Client.
func clientRequest(url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// A skip that reads what the authentication middleware stored with
// c.Locals, through the fiber.Ctx: admins are not limited.
func ExampleNative() {
	mw, err := fiber3mw.New(exampleLimiter(), httplimit.WithSkip(func(r keyfuncs.Request) bool {
		c, ok := fiber3mw.Native(r)
		return ok && c.Locals("role") == "admin"
	}))
	if err != nil {
		panic(err)
	}
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		c.Locals("role", c.Get("X-Role")) // stands for real authentication
		return c.Next()
	}, mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("hello\n") })
	do := func(r *http.Request) (*http.Response, error) { return app.Test(r, fiber.TestConfig{}) }

	send(do, httptest.NewRequest("GET", "/", nil), "X-Role", "admin")
	send(do, httptest.NewRequest("GET", "/", nil), "X-Role", "admin")
	send(do, httptest.NewRequest("GET", "/", nil))
	send(do, httptest.NewRequest("GET", "/", nil))
	// Output:
	// 200 hello
	// 200 hello
	// 200 hello
	// 429 Too Many Requests
}

// Key by the signed-in user, which the authentication middleware stored with
// c.Locals("user", id) before the limiter runs.
func Example_contextValue() {
	user, err := keyfuncs.ContextValue("user")
	if err != nil {
		panic(err)
	}
	mw, err := fiber3mw.New(exampleLimiter(), httplimit.WithKey(user))
	if err != nil {
		panic(err)
	}
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		if u := c.Get("X-User"); u != "" { // stands for real authentication
			c.Locals("user", u)
		}
		return c.Next()
	}, mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("hello\n") })
	do := func(r *http.Request) (*http.Response, error) { return app.Test(r, fiber.TestConfig{}) }

	send(do, httptest.NewRequest("GET", "/", nil), "X-User", "alice")
	send(do, httptest.NewRequest("GET", "/", nil), "X-User", "alice")
	send(do, httptest.NewRequest("GET", "/", nil), "X-User", "bob")
	send(do, httptest.NewRequest("GET", "/", nil))
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
	// 401 Unauthorized
}

// Key by Fiber's c.IP(), with Fiber told to read X-Real-Ip from the proxy on
// this host only (Fiber v3 reads ProxyHeader only from a peer that
// TrustProxyConfig trusts).
func Example_frameworkIP() {
	key, err := keyfuncs.FrameworkIP()
	if err != nil {
		panic(err)
	}
	mw, err := fiber3mw.New(exampleLimiter(), httplimit.WithKey(key))
	if err != nil {
		panic(err)
	}
	app := fiber.New(fiber.Config{
		ProxyHeader:      "X-Real-Ip",
		TrustProxy:       true,
		TrustProxyConfig: fiber.TrustProxyConfig{Proxies: []string{"127.0.0.1"}},
	})
	app.Get("/", mw, func(c fiber.Ctx) error { return c.SendString("hello " + c.IP() + "\n") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	defer func() { _ = app.Shutdown() }()
	url := "http://" + ln.Addr().String() + "/"
	do := http.DefaultClient.Do

	send(do, clientRequest(url), "X-Real-Ip", "203.0.113.9")
	send(do, clientRequest(url), "X-Real-Ip", "203.0.113.9")
	send(do, clientRequest(url), "X-Real-Ip", "203.0.113.10")
	// Output:
	// 200 hello 203.0.113.9
	// 429 Too Many Requests
	// 200 hello 203.0.113.10
}
