package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

// stopWait bounds the wait for the calls under way when the server stops;
// then the streams still open are cut.
const stopWait = 5 * time.Second

// newMetricsServer returns the plain HTTP server of -metrics-addr: the
// metrics at flags.MetricsPath, 404 for anything else.
func newMetricsServer(metrics http.Handler) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET "+flags.MetricsPath, metrics)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// run serves setup's server until ctx is done or a listener fails, after
// writing the line that names its addresses to stderr; then it stops the
// server, letting the calls under way finish for up to stopWait.
func run(ctx context.Context, setup *flags.GRPCSetup, stderr io.Writer) error {
	srv, err := newServer(setup)
	if err != nil {
		return err
	}
	grpcLn, metricsLn, err := setup.Listen(stderr)
	if err != nil {
		return err
	}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(grpcLn) }()
	var metrics *http.Server
	if metricsLn != nil {
		metrics = newMetricsServer(setup.Metrics)
		go func() { served <- metrics.Serve(metricsLn) }()
	}
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	gracefulStop(srv)
	if metrics != nil {
		sctx, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		_ = metrics.Shutdown(sctx)
	}
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// gracefulStop stops srv, letting the calls under way finish for up to
// stopWait, and then cutting them.
func gracefulStop(srv *grpc.Server) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopWait):
		srv.Stop()
		<-done
	}
}
