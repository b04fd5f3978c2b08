package ginmw_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
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
func send(router *gin.Engine, peer string, kv ...string) {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = peer
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
}

// A skip that reads what the authentication middleware stored with c.Set,
// through the *gin.Context: admins are not limited.
func ExampleNative() {
	mw, err := ginmw.New(exampleLimiter(), httplimit.WithSkip(func(r keyfuncs.Request) bool {
		c, ok := ginmw.Native(r)
		return ok && c.GetBool("admin")
	}))
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	router.Use(func(c *gin.Context) {
		c.Set("admin", c.GetHeader("X-Role") == "admin") // stands for real authentication
	}, mw)
	router.GET("/", func(c *gin.Context) { c.String(200, "hello\n") })

	send(router, "192.0.2.1:1234", "X-Role", "admin")
	send(router, "192.0.2.1:1234", "X-Role", "admin")
	send(router, "192.0.2.1:1234")
	send(router, "192.0.2.1:1234")
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
	mw, err := ginmw.New(exampleLimiter(), httplimit.WithKey(user))
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	router.Use(func(c *gin.Context) {
		if u := c.GetHeader("X-User"); u != "" { // stands for real authentication
			c.Set("user", u)
		}
	}, mw)
	router.GET("/", func(c *gin.Context) { c.String(200, "hello\n") })

	send(router, "192.0.2.1:1234", "X-User", "alice")
	send(router, "192.0.2.1:1234", "X-User", "alice")
	send(router, "192.0.2.1:1234", "X-User", "bob")
	send(router, "192.0.2.1:1234")
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
	// 401 Unauthorized
}

// Key by Gin's c.ClientIP(), with Gin told which proxies to trust (by
// default Gin trusts every peer, and any client could pick its own key).
func Example_frameworkIP() {
	key, err := keyfuncs.FrameworkIP()
	if err != nil {
		panic(err)
	}
	mw, err := ginmw.New(exampleLimiter(), httplimit.WithKey(key))
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	if err := router.SetTrustedProxies([]string{"10.0.0.0/8"}); err != nil {
		panic(err)
	}
	router.Use(mw)
	router.GET("/", func(c *gin.Context) { c.String(200, "hello %s\n", c.ClientIP()) })

	send(router, "10.0.0.7:1234", "X-Forwarded-For", "203.0.113.9")
	send(router, "10.0.0.8:1234", "X-Forwarded-For", "203.0.113.9")
	send(router, "10.0.0.7:1234", "X-Forwarded-For", "203.0.113.10")
	send(router, "198.51.100.4:1234", "X-Forwarded-For", "203.0.113.11")
	// Output:
	// 200 hello 203.0.113.9
	// 429 Too Many Requests
	// 200 hello 203.0.113.10
	// 200 hello 198.51.100.4
}
