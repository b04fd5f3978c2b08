// Command gin is a Gin server behind ratewarden's middleware:
//
//	go run ./examples/gin -limit 10/s -algorithm gcra
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

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/ginmw"
)

func main() {
	setup := flags.MustLoad("gin")
	defer setup.Close()

	limit, err := ginmw.New(setup.Limiter, setup.Options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gin:", err)
		os.Exit(1)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(limit)
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	r.GET(flags.HealthPath, func(c *gin.Context) { c.String(http.StatusOK, "healthy\n") })
	srv := &http.Server{Handler: r}

	ln, err := setup.Listen(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gin:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "gin:", err)
	}
}
