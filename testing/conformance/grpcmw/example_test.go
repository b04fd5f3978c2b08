package grpcmw_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// One rules document serves HTTP and gRPC: a call is matched as a POST of
// its full method, so a method's policy lists it in paths, and a service's
// takes its prefix.
func Example_httpAndGRPC() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: search
    match: {paths: ["/api/search", "/grpc.testing.TestService/EmptyCall"]}
    limits: [1/m]
  - name: service
    match: {prefixes: ["/grpc.testing.TestService/"]}
    limits: [100/m]
`), "rules.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := memory.New()
	defer store.Close()
	set, _ := rules.New(store, doc)

	ic, err := grpcmw.Middleware(set)
	if err != nil {
		fmt.Println(err)
		return
	}
	client, _, stop := serve(grpc.NewServer(ic.ServerOptions()...))
	defer stop()
	mw, _ := stdhttp.Middleware(set)
	web := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	var hdr metadata.MD
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
	fmt.Println("gRPC:", status.Code(err), hdr.Get("ratelimit-policy"))
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{})
	fmt.Println("gRPC:", status.Code(err))
	rec := httptest.NewRecorder()
	web.ServeHTTP(rec, httptest.NewRequest("GET", "/api/search", nil))
	fmt.Println("HTTP:", rec.Code, rec.Header().Get("RateLimit-Policy"))
	// Output:
	// gRPC: OK ["search";q=1;w=60, "service";q=100;w=60]
	// gRPC: ResourceExhausted
	// HTTP: 200 "search";q=1;w=60
}

// The README's lines: one rules document for HTTP and gRPC, in force on
// both servers at once.
func Example_readme() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: search
    match: {paths: ["/api/search", "/grpc.testing.TestService/EmptyCall"]}
    limits: [2/m]
`), "rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	set, err := rules.New(store, doc)
	if err != nil {
		log.Fatal(err)
	}

	limiter, err := grpcmw.Middleware(set) // gRPC
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.Middleware(set) // HTTP
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(limiter.ServerOptions()...)
	mux := http.NewServeMux()
	handler := mw(mux)

	client, _, stop := serve(srv)
	defer stop()
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{})
	fmt.Println(status.Code(err), handler != nil)
	// Output: OK true
}

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
