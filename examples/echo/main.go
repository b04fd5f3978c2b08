// Command echo is an Echo server behind ratewarden's middleware:
//
//	go run ./examples/echo -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; GET /healthz is never limited. The flags are those
// of every example server (see examples/internal/flags).
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func main() {
	setup := flags.MustLoad("echo")
	defer setup.Close()

	limit, err := echomw.New(setup.Limiter, setup.Options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(limit)
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") })
	e.GET(flags.HealthPath, func(c echo.Context) error { return c.String(http.StatusOK, "healthy\n") })

	ln, err := setup.Listen(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
	e.Listener = ln
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = e.Shutdown(context.Background())
	}()
	if err := e.Start(""); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "echo:", err)
	}
}
