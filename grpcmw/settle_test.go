package grpcmw_test

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// costServer answers with the cost its caller names in x-want-cost, set as
// header metadata (x-want-where: header) or as trailer metadata (the
// default), on unary calls and on streams.
type costServer struct {
	testgrpc.UnimplementedTestServiceServer
}

func wanted(ctx context.Context) (cost, where string) {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-want-cost"); len(v) > 0 {
		cost = v[0]
	}
	if v := md.Get("x-want-where"); len(v) > 0 {
		where = v[0]
	}
	return cost, where
}

func (costServer) UnaryCall(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	if cost, where := wanted(ctx); cost != "" {
		md := metadata.Pairs("x-cost", cost)
		if where == "header" {
			_ = grpc.SetHeader(ctx, md)
		} else {
			_ = grpc.SetTrailer(ctx, md)
		}
	}
	return &testgrpc.SimpleResponse{}, nil
}

func (costServer) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}
	if cost, where := wanted(stream.Context()); cost != "" {
		md := metadata.Pairs("x-cost", cost)
		if where == "header" {
			_ = stream.SetHeader(md)
		} else {
			stream.SetTrailer(md)
		}
	}
	return nil
}

// startCost serves a costServer behind ic on bufconn and returns a client.
func startCost(t *testing.T, ic *grpcmw.Interceptor) testgrpc.TestServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(unaryPeer), grpc.ChainStreamInterceptor(streamPeer)}, ic.ServerOptions()...)...)
	testgrpc.RegisterTestServiceServer(s, costServer{})
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(); s.Stop() })
	return testgrpc.NewTestServiceClient(conn)
}

// A settle reads the cost from the handler's trailer or header metadata, on
// unary calls and streams; the call's trailer tells the quota after it.
func TestSettleReadsTheHandlersMetadata(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.FixedWindow, core.PerMinute(100), core.WithDebt(10))
	ic, err := grpcmw.New(lim, httplimit.WithSettleHeader("X-Cost"))
	require.NoError(t, err)
	client := startCost(t, ic)
	unary := func(kv ...string) (trailer metadata.MD) {
		_, err := client.UnaryCall(outgoing(peerA, kv...), &testgrpc.SimpleRequest{}, grpc.Trailer(&trailer))
		require.NoError(t, err)
		return trailer
	}
	tr := unary("x-want-cost", "10")
	assert.Equal(t, []string{"90"}, tr.Get("x-ratelimit-remaining"), "the trailer's cost: 10 spent")
	tr = unary("x-want-cost", "5", "x-want-where", "header")
	assert.Equal(t, []string{"85"}, tr.Get("x-ratelimit-remaining"), "the header's cost")
	tr = unary()
	assert.Empty(t, tr.Get("x-ratelimit-remaining"), "no cost: the reservation of 1 stays, nothing to rewrite")
	tr = unary("x-want-cost", "NaN")
	assert.Empty(t, tr.Get("x-ratelimit-remaining"), "a bad cost keeps the reservation")

	stream, err := client.FullDuplexCall(outgoing(peerA, "x-want-cost", "30"))
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	for err == nil {
		_, err = stream.Recv()
	}
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []string{"53"}, stream.Trailer().Get("x-ratelimit-remaining"), "85 - 1 - 1 - 30")
	d, err := lim.Peek(context.Background(), "192.0.2.1")
	require.NoError(t, err)
	assert.Equal(t, int64(53), d.Remaining)
}
