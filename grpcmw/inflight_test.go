package grpcmw_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
)

// waitNoSlot waits until lim holds no in-flight slot: the interceptor
// releases it as the handler returns, before the status goes out.
func waitNoSlot(t *testing.T, lim *core.Limiter) {
	t.Helper()
	require.Eventually(t, func() bool { return lim.SlotsHeld() == 0 }, 5*time.Second, time.Millisecond)
}

// A stream holds its key's slot while its handler runs: a second stream of
// the key is refused with ResourceExhausted and the policy's
// x-concurrency-limit, and gets one once the first ends.
func TestInFlightStream(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.FixedWindow, core.PerMinute(100), core.WithInFlight(core.Concurrent(1)))
	ic, err := grpcmw.New(lim)
	require.NoError(t, err)
	h := start(t, ic)

	open, err := h.client.FullDuplexCall(outgoing(peerA))
	require.NoError(t, err)
	require.NoError(t, open.Send(&testgrpc.StreamingOutputCallRequest{}))
	_, err = open.Recv() // the handler runs
	require.NoError(t, err)
	assert.Equal(t, int64(1), lim.SlotsHeld())

	r := h.duplex(peerA)
	require.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	assert.Equal(t, `"default";n=1`, r.field("x-concurrency-limit"))
	assert.Equal(t, "1", r.field("retry-after"))
	require.NoError(t, h.duplex(peerB).err, "another client's slots are its own")

	require.NoError(t, open.CloseSend())
	_, err = open.Recv()
	require.Error(t, err) // io.EOF: the stream ended
	waitNoSlot(t, lim)
	require.NoError(t, h.duplex(peerA).err)
	require.NoError(t, h.unary(codes.OK, peerA).err)
	require.Equal(t, codes.Internal, status.Code(h.unary(codes.Internal, peerA).err), "a handler's error status")
	waitNoSlot(t, lim)
	require.NoError(t, h.unary(codes.OK, peerA).err)
}

// A handler that panics (recovered by an interceptor outside the limiter's)
// and a call whose client gives up both give their slot back.
func TestInFlightPanicAndCancel(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.FixedWindow, core.PerMinute(100), core.WithInFlight(core.Concurrent(1)))
	ic, err := grpcmw.New(lim)
	require.NoError(t, err)
	recovered := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = status.Error(codes.Internal, "panic")
			}
		}()
		return next(ctx, req)
	}
	var mu sync.Mutex
	var hold chan struct{}
	panicky := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if info.FullMethod == emptyCall {
			panic("handler bug")
		}
		mu.Lock()
		c := hold
		mu.Unlock()
		if c != nil {
			<-c // a slow handler
		}
		return next(ctx, req)
	}
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(recovered, unaryPeer, ic.UnaryServerInterceptor(), panicky))
	testgrpc.RegisterTestServiceServer(s, &testServer{})
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(); s.Stop() })
	client := testgrpc.NewTestServiceClient(conn)

	for range 3 {
		_, err = client.EmptyCall(outgoing(peerA), &testgrpc.Empty{})
		require.Equal(t, codes.Internal, status.Code(err))
		waitNoSlot(t, lim)
	}

	mu.Lock()
	hold = make(chan struct{})
	mu.Unlock()
	ctx, cancel := context.WithTimeout(outgoing(peerA), 50*time.Millisecond)
	defer cancel()
	_, err = client.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	assert.Equal(t, int64(1), lim.SlotsHeld(), "the handler still runs after its client left")
	mu.Lock()
	close(hold)
	hold = nil
	mu.Unlock()
	waitNoSlot(t, lim)
	_, err = client.UnaryCall(outgoing(peerA), &testgrpc.SimpleRequest{})
	require.NoError(t, err)
}
