// Command fiber is a Fiber v2 server behind ratewarden's middleware:
//
//	go run ./examples/fiber -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; GET /healthz is never limited. The flags are those
// of every example server (see examples/internal/flags).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/fibermw"
)

func main() {
	setup := flags.MustLoad("fiber")
	defer setup.Close()

	limit, err := fibermw.New(setup.Limiter, setup.Options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fiber:", err)
		os.Exit(1)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(limit)
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok\n") })
	app.Get(flags.HealthPath, func(c *fiber.Ctx) error { return c.SendString("healthy\n") })

	ln, err := setup.Listen(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fiber:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = app.ShutdownWithContext(context.Background())
	}()
	if err := app.Listener(ln); err != nil {
		fmt.Fprintln(os.Stderr, "fiber:", err)
	}
}
