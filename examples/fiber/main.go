// Command fiber is a Fiber v2 server behind ratewarden's middleware:
//
//	go run ./examples/fiber -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; POST /login answers 200 for the form field
// password=letmein and 401 for any other; GET /healthz, and GET /metrics
// under -metrics (served through Fiber's adaptor middleware), are never
// limited. The flags are those of every example server (see
// examples/internal/flags and -h).
package main

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/fibermw"
)

func main() {
	setup := flags.MustLoad("fiber")
	defer setup.Close()

	limit, err := fibermw.New(setup.Limiter, setup.Options...)
	setup.Check(err)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(limit)
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok\n") })
	app.Post(flags.LoginPath, func(c *fiber.Ctx) error {
		status := flags.LoginStatus(c.FormValue("password"))
		return c.Status(status).SendString(http.StatusText(status) + "\n")
	})
	app.Get(flags.HealthPath, func(c *fiber.Ctx) error { return c.SendString("healthy\n") })
	if setup.Metrics != nil {
		app.Get(flags.MetricsPath, adaptor.HTTPHandler(setup.Metrics))
	}
	setup.Run(app.Listener, app.ShutdownWithContext)
}
