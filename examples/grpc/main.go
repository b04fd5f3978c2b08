// Command grpc is a gRPC server behind ratewarden's interceptors (grpcmw):
//
//	go run ./examples/grpc -limit 10/s -key header:x-api-key -metrics-addr 127.0.0.1:9090
//	go run ./examples/grpc -rules examples/rules-grpc.yaml
//	grpcurl -plaintext -H 'x-api-key: k1' localhost:50051 grpc.testing.TestService/EmptyCall
//
// It serves grpc.testing.TestService (from grpc-go's interop package, so no
// protoc step: EmptyCall, UnaryCall and CacheableUnaryCall, and the streams
// StreamingInputCall, StreamingOutputCall and FullDuplexCall, with trivial
// answers), the standard health service and server reflection (so that
// grpcurl needs no .proto files), which are never limited (with -rules, the
// document decides: examples/rules-grpc.yaml exempts the health service and
// matches no reflection call). Every unary call and every stream, when
// it opens, goes through the policy the flags describe, or the rules
// document: keys read the call's metadata (-key header:NAME, -key jwt) or its
// peer (-key ip); a call over the limit gets ResourceExhausted with
// google.rpc.RetryInfo and QuotaFailure; every decided call carries the
// rate-limit fields as header metadata. The flags are those of the HTTP
// example servers where they apply (see examples/internal/flags and -h),
// with -metrics-addr HOST:PORT serving the Prometheus metrics at /metrics
// over plain HTTP. It prints one line naming its address when it serves,
// reloads its rules on SIGHUP, and stops on SIGINT or SIGTERM, letting the
// calls under way finish.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/reflection"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/grpcmw"
)

// stopWait bounds the wait for the calls under way when the server stops;
// then the streams still open are cut.
const stopWait = 5 * time.Second

func main() {
	setup := flags.MustLoadGRPC("grpc")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopReload := setup.ReloadOnHangup()
	err := run(ctx, setup, os.Stderr)
	stopReload()
	stop()
	if cerr := setup.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc: %v\n", err)
		os.Exit(1)
	}
}

// newServer returns the gRPC server of setup: the test service, the health
// service and reflection behind the limiter it describes.
func newServer(setup *flags.GRPCSetup) (*grpc.Server, error) {
	policy, err := setup.Handler()
	if err != nil {
		return nil, err
	}
	limiter, err := grpcmw.Middleware(policy)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(limiter.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(srv, testService{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	reflection.Register(srv)
	return srv, nil
}

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
