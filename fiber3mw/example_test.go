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
	"github.com/ratewarden/ratewarden/store/memory"
)

// Two requests a minute per client IP in front of a Fiber route that reports
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
	mw, err := fiber3mw.New(lim, httplimit.WithDecisionInContext())
	if err != nil {
		panic(err)
	}
	app := fiber.New()
	app.Use(mw)
	app.Get("/", func(c fiber.Ctx) error {
		d, _ := fiber3mw.DecisionFrom(c)
		return c.SendString(fmt.Sprintf("hello, %d left\n", d.Remaining))
	})

	for range 3 {
		resp, err := app.Test(httptest.NewRequest("GET", "/", nil), fiber.TestConfig{})
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		fmt.Print(resp.StatusCode, " ", resp.Header.Get("RateLimit"), " ", string(body))
	}
	// Output:
	// 200 "default";r=1;t=60 hello, 1 left
	// 200 "default";r=0;t=60 hello, 0 left
	// 429 "default";r=0;t=60 Too Many Requests
}
