package benchmarks

// A unary gRPC call over bufconn (grpc-go's in-memory listener: the whole
// client and server stack, no kernel), through nothing but a floor
// interceptor, through go-grpc-middleware v2's ratelimit interceptor with an
// x/time/rate limiter (what gRPC services use today: one bucket per server,
// it has no keys), and through grpcmw keyed by the client's IP, with the
// rate-limit header metadata off (httplimit.WithHeaders(0)) and on (every
// field); then a denied call through each limiter. Subtract the floor row
// for what a limiter adds; grpc-go's own allocations are the floor's.
//
//	go test -run '^$' -bench '^BenchmarkGRPC' -benchmem ./benchmarks
//
// The bufconn connections report a TCP client address (benchTCPPeer), as a
// real connection does, so that grpcmw keys by the peer's IP as it would in
// production (bufconn's own address is not an IP, a key error).

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// benchTCPPeer is the client address the bufconn connections report.
var benchTCPPeer = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}

// tcpPeerListener is a bufconn listener whose connections report
// benchTCPPeer as their remote address.
type tcpPeerListener struct{ *bufconn.Listener }

func (l tcpPeerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tcpPeerConn{c}, nil
}

type tcpPeerConn struct{ net.Conn }

func (tcpPeerConn) RemoteAddr() net.Addr { return benchTCPPeer }

// floorInterceptor only calls the handler: what any interceptor costs in
// grpc-go.
func floorInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(ctx, req)
}

// xrateLimiter is go-grpc-middleware's ratelimit.Limiter on an x/time/rate
// bucket, as its documentation shows.
type xrateLimiter struct{ *rate.Limiter }

// errXRateExceeded is the xrateLimiter's refusal.
var errXRateExceeded = errors.New("rate limit exceeded")

func (l xrateLimiter) Limit(context.Context) error {
	if !l.Allow() {
		return errXRateExceeded
	}
	return nil
}

// grpcBenchClient serves emptyService behind ic on bufconn and returns a
// connected client; everything stops when the benchmark ends.
func grpcBenchClient(b *testing.B, ic grpc.UnaryServerInterceptor) testgrpc.TestServiceClient {
	b.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(ic))
	testgrpc.RegisterTestServiceServer(srv, emptyService{})
	go func() { _ = srv.Serve(tcpPeerListener{lis}) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return testgrpc.NewTestServiceClient(conn)
}

// grpcmwUnary is grpcmw's unary interceptor over lim, keyed by the peer's
// IP, with opts.
func grpcmwUnary(b *testing.B, lim *core.Limiter, opts ...httplimit.Option) grpc.UnaryServerInterceptor {
	b.Helper()
	ic, err := grpcmw.New(lim, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return ic.UnaryServerInterceptor()
}

// runGRPCUnary makes EmptyCall through ic until the benchmark ends, after
// one call that spends a denied row's budget; every call must end with want.
func runGRPCUnary(b *testing.B, ic grpc.UnaryServerInterceptor, want codes.Code) {
	client := grpcBenchClient(b, ic)
	ctx, req := context.Background(), &testgrpc.Empty{}
	_, _ = client.EmptyCall(ctx, req)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := client.EmptyCall(ctx, req); status.Code(err) != want {
			b.Fatalf("got %v, want %s", err, want)
		}
	}
}

// BenchmarkGRPCUnary: allowed calls through the floor, go-grpc-middleware's
// ratelimit on x/time/rate, and grpcmw with the metadata off and on; denied
// calls through both limiters, at one call an hour (grpcmw's with RetryInfo,
// QuotaFailure and its fields; go-grpc-middleware's a bare status with a
// message).
func BenchmarkGRPCUnary(b *testing.B) {
	b.Run("floor", func(b *testing.B) { runGRPCUnary(b, floorInterceptor, codes.OK) })
	b.Run("grpc-middleware-xrate", func(b *testing.B) {
		lim := xrateLimiter{rate.NewLimiter(rate.Limit(1e12), 1<<40)}
		runGRPCUnary(b, ratelimit.UnaryServerInterceptor(lim), codes.OK)
	})
	b.Run("ratewarden-nometadata", func(b *testing.B) {
		runGRPCUnary(b, grpcmwUnary(b, benchLimiter(b), httplimit.WithHeaders(0)), codes.OK)
	})
	b.Run("ratewarden", func(b *testing.B) {
		runGRPCUnary(b, grpcmwUnary(b, benchLimiter(b)), codes.OK)
	})
	b.Run("denied/grpc-middleware-xrate", func(b *testing.B) {
		lim := xrateLimiter{rate.NewLimiter(rate.Every(time.Hour), 1)}
		runGRPCUnary(b, ratelimit.UnaryServerInterceptor(lim), codes.ResourceExhausted)
	})
	b.Run("denied/ratewarden", func(b *testing.B) {
		runGRPCUnary(b, grpcmwUnary(b, deniedLimiter(b)), codes.ResourceExhausted)
	})
}
