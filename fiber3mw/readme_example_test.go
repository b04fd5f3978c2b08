package fiber3mw_test

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line form: 100 requests a minute per client IP in front of every
// route of a Fiber v3 app.
func ExamplePerIP() {
	app := fiber.New()
	app.Use(fiber3mw.PerIP("100/m")) // 100 requests a minute per client IP
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("hello\n") })

	resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", resp.Header.Get("RateLimit-Policy"), " ", string(body))
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
	mw, err := fiber3mw.New(lim)
	if err != nil {
		log.Fatal(err)
	}
	app := fiber.New()
	app.Use(mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("hello\n") })

	resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", resp.Header.Get("RateLimit-Policy"), " ", string(body))
	// Output:
	// 200 "default";q=10;w=1 hello
}
