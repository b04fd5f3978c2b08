// Command stdhttp is a net/http server behind ratewarden's middleware:
//
//	go run ./examples/stdhttp -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; GET /healthz is never limited. The flags are those
// of every example server (see examples/internal/flags): -addr, -limit,
// -burst, -algorithm, -key, -jwt-secret, -trusted-proxies, -store, -fail.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func main() {
	setup := flags.MustLoad("stdhttp")
	defer setup.Close()

	limit, err := stdhttp.New(setup.Limiter, setup.Options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdhttp:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET "+flags.HealthPath, func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "healthy") })
	srv := &http.Server{Handler: limit(mux)}

	ln, err := setup.Listen(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdhttp:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "stdhttp:", err)
	}
}
