// Command fiber is a Fiber v2 server behind ratewarden's middleware:
//
//	go run ./examples/fiber -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; GET /healthz is never limited. The flags are those
// of every example server (see examples/internal/flags).
package main

import (
	"github.com/gofiber/fiber/v2"

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
	app.Get(flags.HealthPath, func(c *fiber.Ctx) error { return c.SendString("healthy\n") })
	setup.Run(app.Listener, app.ShutdownWithContext)
}
