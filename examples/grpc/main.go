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
//
// newLimit holds the lines an app copies: the limiter on the store, the key,
// and grpcmw.New (or grpcmw.Middleware on the rules); examples/internal/flags
// parses and checks the flags and makes the store and the rules; serve.go
// serves, and service.go answers the calls.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/reflection"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

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

// newLimit returns the interceptors that limit the calls as the flags say:
// with -rules, as the rules document says; otherwise with the algorithm and
// limit of -algorithm and -limit, per client as -key says, the health
// service and reflection never limited.
func newLimit(setup *flags.GRPCSetup) (*grpcmw.Interceptor, error) {
	if setup.Rules != nil {
		return grpcmw.Middleware(setup.Rules)
	}
	cfg := setup.Config
	// setup.Store is memory.New(), or redisstore.New on a go-redis client of
	// redisstore.ParseURL's options (-store redis://...).
	// cfg.LimiterOptions(): -concurrency's core.WithInFlight(core.Concurrent(N)),
	// -block-for's core.WithBlockFor(DURATION), -lease's core.WithTokenLease.
	lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
	if err != nil {
		return nil, err
	}
	// keyfuncs.IP(), keyfuncs.Header(name) (a metadata entry) or
	// jwtkey.Subject(...) (the bearer token of the authorization entry).
	key, err := cfg.KeyFunc()
	if err != nil {
		return nil, err
	}
	// The other flags: -tier, -fail, -dry-run, -count-only-failures, the
	// error log and the metrics.
	lim, opts, err := setup.Policy(lim)
	if err != nil {
		return nil, err
	}
	return grpcmw.New(lim, append(opts, httplimit.WithKey(key), httplimit.WithSkip(flags.IsUnlimitedCall))...)
}

// newServer returns the gRPC server of setup: the test service, the health
// service and reflection behind the limiter it describes.
func newServer(setup *flags.GRPCSetup) (*grpc.Server, error) {
	limiter, err := newLimit(setup)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(limiter.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(srv, testService{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	reflection.Register(srv)
	return srv, nil
}
