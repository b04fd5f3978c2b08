package echo5mw_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A 429 rendered by Echo: the policy sets the rate-limit headers and
// Retry-After, then the denied handler answers with c.JSON, here the default
// problem with one field changed.
func ExampleNew_deniedHandler() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(1), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	mw, err := echo5mw.New(lim, httplimit.WithDeniedHandler(func(_ httplimit.ResponseWriter, r keyfuncs.Request, d core.Decision) {
		c, _ := echo5mw.Native(r)
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "upgrade for more"
		_ = c.JSON(pd.Status, pd)
	}))
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello") })

	for range 2 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		fmt.Println(rec.Code, rec.Header().Get("Retry-After"), strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200  hello
	// 429 60 {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"upgrade for more","violated-policies":["default"]}
}
