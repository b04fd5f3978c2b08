package benchmarks

// BenchmarkGRPCAdded: the time an interceptor adds to a unary call over
// bufconn, measured as BenchmarkHTTPAdded measures middleware: blocks of
// calls through the floor interceptor and through the row's interceptor in
// turn, in the same loop, so that the machine's drift, which moves a
// separate row's whole call by up to 20%, falls on both.
//
//	go test -run '^$' -bench GRPCAdded -count 5 ./benchmarks

import (
	"context"
	"testing"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/httplimit"
)

// grpcCaller makes one EmptyCall through ic per call, remembering how the
// last one ended.
func grpcCaller(b *testing.B, ic grpc.UnaryServerInterceptor) (call func(), code func() int) {
	client := grpcBenchClient(b, ic)
	ctx, req := context.Background(), &testgrpc.Empty{}
	var last codes.Code
	call = func() {
		_, err := client.EmptyCall(ctx, req)
		last = status.Code(err)
	}
	call() // connect and warm up
	return call, func() int {
		if last == codes.OK {
			return 200
		}
		return 500
	}
}

func BenchmarkGRPCAdded(b *testing.B) {
	rows := []struct {
		name string
		make func(b *testing.B) grpc.UnaryServerInterceptor
	}{
		{"grpc-middleware-xrate", func(*testing.B) grpc.UnaryServerInterceptor {
			return ratelimit.UnaryServerInterceptor(xrateLimiter{rate.NewLimiter(rate.Limit(1e12), 1<<40)})
		}},
		{"ratewarden-nometadata", func(b *testing.B) grpc.UnaryServerInterceptor {
			return grpcmwUnary(b, benchLimiter(b), httplimit.WithHeaders(0))
		}},
		{"ratewarden", func(b *testing.B) grpc.UnaryServerInterceptor { return grpcmwUnary(b, benchLimiter(b)) }},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			bare, _ := grpcCaller(b, floorInterceptor)
			wrapped, code := grpcCaller(b, row.make(b))
			added(b, bare, wrapped, 1, code)
		})
	}
}
