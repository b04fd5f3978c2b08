package grpcmw_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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

// exampleService is the service the examples serve: grpc.testing's
// TestService, whose EmptyCall answers at once.
type exampleService struct {
	testgrpc.UnimplementedTestServiceServer
}

func (exampleService) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}

// serve registers the example service and the health service on srv, serves
// it on a loopback port, and returns a client of it and the function that
// stops both.
func serve(srv *grpc.Server) (testgrpc.TestServiceClient, *grpc.ClientConn, func()) {
	testgrpc.RegisterTestServiceServer(srv, exampleService{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	return testgrpc.NewTestServiceClient(conn), conn, func() { _ = conn.Close(); srv.Stop() }
}

// show prints what a client learns from a call: its code, the rate-limit
// fields of its header and, for a denial, its details.
func show(hdr metadata.MD, err error) {
	fmt.Println(status.Code(err), hdr.Get("ratelimit"), hdr.Get("retry-after"))
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			fmt.Println("  retry in", d.GetRetryDelay().AsDuration())
		case *errdetails.QuotaFailure:
			v := d.GetViolations()[0]
			fmt.Printf("  quota %q: %s\n", v.GetSubject(), v.GetDescription())
		}
	}
}

// The one line: every client IP may make 100 calls a minute, unary calls and
// streams alike.
func ExamplePerIP() {
	srv := grpc.NewServer(grpcmw.PerIP("100/m").ServerOptions()...)
	client, _, stop := serve(srv)
	defer stop()

	var hdr metadata.MD
	_, err := client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
	fmt.Println(status.Code(err), hdr.Get("ratelimit-policy"))
	// Output: OK ["default";q=100;w=60]
}

// The interceptor alone, where the server has a chain of its own.
func ExamplePerIP_unary() {
	srv := grpc.NewServer(grpc.UnaryInterceptor(grpcmw.PerIP("1/m").UnaryServerInterceptor()))
	client, _, stop := serve(srv)
	defer stop()

	for range 2 {
		var hdr metadata.MD
		_, err := client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
		fmt.Println(status.Code(err), hdr.Get("retry-after"))
	}
	// Output:
	// OK []
	// ResourceExhausted [60]
}

// The full constructor: a limiter of your own (algorithm, store, limits,
// clock) and the HTTP policy's options, here a key from an API-key metadata
// entry and a policy that fails closed. A denial carries RetryInfo, with the
// exact wait, and QuotaFailure, naming the policy.
func ExampleNew() {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store, _ := memory.New(memory.WithClock(clk))
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(2).Named("api"), core.WithClock(clk))
	apiKey, _ := keyfuncs.Header("x-api-key")

	ic, err := grpcmw.New(lim, httplimit.WithKey(apiKey), httplimit.WithFailClosed())
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(ic.UnaryServerInterceptor()), grpc.ChainStreamInterceptor(ic.StreamServerInterceptor()))
	client, _, stop := serve(srv)
	defer stop()

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k-123")
	for range 3 {
		var hdr metadata.MD
		_, err := client.EmptyCall(ctx, &testgrpc.Empty{}, grpc.Header(&hdr))
		show(hdr, err)
		clk.Advance(100 * time.Millisecond)
	}
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{})
	fmt.Println(status.Code(err), "without a key")
	// Output:
	// OK ["api";r=1;t=30] []
	// OK ["api";r=0;t=60] []
	// ResourceExhausted ["api";r=0;t=30] [30]
	//   retry in 29.8s
	//   quota "api": quota of 2 per 1m0s exceeded
	// Unauthenticated without a key
}

// The health service is never limited: httplimit.WithSkip exempts calls by
// full method, which the request view gives as its Route.
func ExampleNew_healthExempt() {
	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(1))
	isHealth := func(r keyfuncs.Request) bool { return r.Route() == healthpb.Health_Check_FullMethodName }

	ic, _ := grpcmw.New(lim, httplimit.WithSkip(isHealth))
	client, conn, stop := serve(grpc.NewServer(ic.ServerOptions()...))
	defer stop()

	checker := healthpb.NewHealthClient(conn)
	for range 3 {
		_, err := checker.Check(context.Background(), &healthpb.HealthCheckRequest{})
		fmt.Println("health:", status.Code(err))
	}
	for range 2 {
		_, err := client.EmptyCall(context.Background(), &testgrpc.Empty{})
		fmt.Println("service:", status.Code(err))
	}
	// Output:
	// health: OK
	// health: OK
	// health: OK
	// service: OK
	// service: ResourceExhausted
}

// The codes a refund predicate sees: a gRPC code's HTTP status.
func ExampleHTTPStatus() {
	countFailures := httplimit.WithRefund(func(status int) bool { return status < 400 })
	_ = countFailures
	fmt.Println(grpcmw.HTTPStatus(0), grpcmw.HTTPStatus(5), grpcmw.HTTPStatus(16), grpcmw.HTTPStatus(8), grpcmw.HTTPStatus(13))
	// Output: 200 404 401 429 500
}

// The code of a responder's HTTP status.
func ExampleCode() {
	fmt.Println(grpcmw.Code(429), grpcmw.Code(401), grpcmw.Code(503), grpcmw.Code(403))
	// Output: ResourceExhausted Unauthenticated Unavailable PermissionDenied
}
