package grpcmw_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// floor is an interceptor that only calls the handler: what any interceptor
// costs in grpc-go, the baseline ours is measured against.
func floor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(ctx, req)
}

// BenchmarkUnary compares a unary call over bufconn through the floor
// interceptor with one through ours, on the memory store, allowed (the
// rate-limit fields sent) and denied (the status and its details built).
// The difference in allocs/op is what the interceptor costs.
func BenchmarkUnary(b *testing.B) {
	clk := core.NewManualClock(t0)
	apiKey, err := keyfuncs.Header("x-api-key")
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		ic   func(b *testing.B) grpc.UnaryServerInterceptor
		kv   []string
		code codes.Code
	}{
		{"floor", func(*testing.B) grpc.UnaryServerInterceptor { return floor }, nil, codes.OK},
		{"floor/metadata", func(*testing.B) grpc.UnaryServerInterceptor { return floor }, []string{"x-api-key", "k1"}, codes.OK},
		{"allowed/peer", unaryOf(clk, core.PerHour(1<<30)), nil, codes.OK},
		{"allowed/metadata", unaryOf(clk, core.PerHour(1<<30), httplimit.WithKey(apiKey)), []string{"x-api-key", "k1"}, codes.OK},
		{"allowed/no-headers", unaryOf(clk, core.PerHour(1<<30), httplimit.WithoutHeadersOnAllowed()), nil, codes.OK},
		{"denied", unaryOf(clk, core.Limit{Rate: 1, Period: time.Hour, Burst: 1}), nil, codes.ResourceExhausted},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := start(b, nil, grpc.ChainUnaryInterceptor(bc.ic(b)))
			ctx := outgoing(peerA, bc.kv...)
			req := &testgrpc.Empty{}
			_, _ = h.client.EmptyCall(ctx, req) // a denial's key has spent its burst
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := h.client.EmptyCall(ctx, req); status.Code(err) != bc.code {
					b.Fatal(err)
				}
			}
		})
	}
}

// unaryOf returns a builder of our unary interceptor over a limiter of limit
// on the memory store.
func unaryOf(clk core.Clock, limit core.Limit, opts ...httplimit.Option) func(b *testing.B) grpc.UnaryServerInterceptor {
	return func(b *testing.B) grpc.UnaryServerInterceptor {
		ic, err := grpcmw.New(newLimiter(b, clk, core.GCRA, limit), opts...)
		require.NoError(b, err)
		return ic.UnaryServerInterceptor()
	}
}

// headerSink is a grpc.ServerTransportStream that keeps nothing: it isolates
// what the interceptor itself allocates from what grpc-go's transport does
// with the header metadata it is handed.
type headerSink struct{}

func (headerSink) Method() string               { return unaryCall }
func (headerSink) SetHeader(metadata.MD) error  { return nil }
func (headerSink) SendHeader(metadata.MD) error { return nil }
func (headerSink) SetTrailer(metadata.MD) error { return nil }

// BenchmarkInterceptorOnly runs our unary interceptor alone, without a
// connection, on the memory store, keyed by the peer's address: the
// allocations it makes itself (the header metadata it hands to grpc-go:
// its values, the map and the slice behind it).
func BenchmarkInterceptorOnly(b *testing.B) {
	clk := core.NewManualClock(t0)
	apiKey, err := keyfuncs.Header("X-Api-Key")
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		opts []httplimit.Option
	}{
		{"fields", nil},
		{"no-fields", []httplimit.Option{httplimit.WithoutHeadersOnAllowed()}},
		{"metadata-key", []httplimit.Option{httplimit.WithKey(apiKey), httplimit.WithoutHeadersOnAllowed()}},
		{"metadata-key-missing", []httplimit.Option{httplimit.WithKey(apiKey), httplimit.WithKeyFallback(keyfuncs.Static("anonymous")), httplimit.WithoutHeadersOnAllowed()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ic := unaryOf(clk, core.PerHour(1<<30), bc.opts...)(b)
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-api-key", "k1"))
			if strings.HasSuffix(bc.name, "missing") {
				ctx = context.Background()
			}
			ctx = grpc.NewContextWithServerTransportStream(ctx, headerSink{})
			ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}})
			info := &grpc.UnaryServerInfo{FullMethod: unaryCall}
			handler := func(context.Context, any) (any, error) { return nil, nil }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ic(ctx, nil, info, handler); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
