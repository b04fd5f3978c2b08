package grpcmw_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The README's lines: the full constructor, on a server of your own. (It
// listens on a port, so go test compiles it but does not run it.)
func ExampleNew_limiter() {
	store, err := memory.New() // in-process and bounded; Close stops its sweeper
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(store, core.TokenBucket, core.PerSecond(10).WithBurst(20))
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := grpcmw.New(lim) // the httplimit options every adapter takes
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(limiter.ServerOptions()...) // unary calls and streams, one budget per client IP
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", ":50051")
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.Serve(lis))
}

// The README's lines: the HTTP policy's options, here a key from API-key
// metadata, the health service never limited, and a failing store answered
// Unavailable; and what a client reads from a denial.
func ExampleNew_options() {
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(1))
	if err != nil {
		log.Fatal(err)
	}
	apiKey, err := keyfuncs.Header("x-api-key")
	if err != nil {
		log.Fatal(err)
	}

	limiter, err := grpcmw.New(lim,
		httplimit.WithKey(apiKey), // who the client is: a metadata entry (default: the peer's IP)
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return strings.HasPrefix(r.Route(), "/grpc.health.v1.Health/") }),
		httplimit.WithFailClosed(), // Unavailable when the store fails (default: let calls through)
	)
	if err != nil {
		log.Fatal(err)
	}
	client, _, stop := serve(grpc.NewServer(limiter.ServerOptions()...))
	defer stop()

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k-123")
	for range 2 {
		var header metadata.MD
		_, err := client.EmptyCall(ctx, &testgrpc.Empty{}, grpc.Header(&header))
		fmt.Println(status.Code(err), header.Get("ratelimit"))
		for _, d := range status.Convert(err).Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				fmt.Println("retry in about", ri.GetRetryDelay().AsDuration().Round(60e9))
			}
		}
	}
	// Output:
	// OK ["default";r=0;t=60]
	// ResourceExhausted ["default";r=0;t=60]
	// retry in about 1m0s
}

// The README's lines: the interceptors in a chain of your own, after the
// authentication interceptor whose context value keys the calls.
func ExampleInterceptor_UnaryServerInterceptor() {
	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(100))
	user, _ := keyfuncs.ContextValue(userKey{})
	auth := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return next(context.WithValue(ctx, userKey{}, "user-42"), req)
	}
	authStream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		return next(srv, ss)
	}

	limiter, err := grpcmw.New(lim, httplimit.WithKey(user))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(auth, limiter.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(authStream, limiter.StreamServerInterceptor()),
	)
	client, _, stop := serve(srv)
	defer stop()
	var header metadata.MD
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&header))
	fmt.Println(status.Code(err), header.Get("ratelimit"))
	// Output: OK ["default";r=99;t=1]
}
