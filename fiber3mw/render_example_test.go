package fiber3mw_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A 429 rendered by Fiber: the policy sets the rate-limit headers and
// Retry-After, then the denied handler answers with c.Status(429).JSON, here
// the default problem with one field changed.
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
	mw, err := fiber3mw.New(lim, httplimit.WithDeniedHandler(func(_ httplimit.ResponseWriter, r keyfuncs.Request, d core.Decision) {
		c, _ := fiber3mw.Native(r)
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "upgrade for more"
		_ = c.Status(pd.Status).JSON(pd)
	}))
	if err != nil {
		panic(err)
	}
	app := fiber.New()
	app.Get("/", mw, func(c fiber.Ctx) error { return c.SendString("hello") })

	for range 2 {
		resp, err := app.Test(httptest.NewRequest("GET", "/", nil), fiber.TestConfig{})
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"), string(body))
	}
	// Output:
	// 200  hello
	// 429 60 {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"upgrade for more","violated-policies":["default"]}
}
