package grpcmw_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func TestStreamDecidedWhenItOpens(t *testing.T) {
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)))
	require.NoError(t, err)
	h := start(t, ic)

	r := h.duplex(peerA)
	require.NoError(t, r.err)
	assert.Equal(t, `"default";r=0;t=60`, r.field("ratelimit"), "set with ServerStream.SetHeader")

	r = h.duplex(peerA)
	require.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	assert.Equal(t, "60", r.field("retry-after"), "a denied stream carries the fields too")
	ri, qf := details(t, r.err)
	assert.Equal(t, time.Minute, ri.GetRetryDelay().AsDuration())
	assert.Equal(t, "default", qf.GetViolations()[0].GetSubject())
	assert.Equal(t, int64(1), h.srv.calls.Load(), "a denied stream never reaches its handler")
}

// messageCost weighs a received message by its payload (one unit per byte,
// at least one); opening a stream costs nothing.
func messageCost(r keyfuncs.Request) int64 {
	m, ok := grpcmw.Message(r)
	if !ok {
		return 0
	}
	if req, ok := m.(*testgrpc.StreamingInputCallRequest); ok {
		return max(int64(len(req.GetPayload().GetBody())), 1)
	}
	return 1
}

func TestStreamMessages(t *testing.T) {
	clk := core.NewManualClock(t0)
	p := mustPolicy(t, newLimiter(t, clk, core.FixedWindow, core.PerMinute(10)), httplimit.WithCost(messageCost))
	ic, err := grpcmw.Middleware(p, grpcmw.WithMessages())
	require.NoError(t, err)
	h := start(t, ic)

	stream, err := h.client.StreamingInputCall(outgoing(peerA))
	require.NoError(t, err)
	for _, size := range []int{4, 4, 1} { // 9 of 10
		require.NoError(t, stream.Send(&testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: make([]byte, size)}}))
	}
	resp, err := stream.CloseAndRecv()
	require.NoError(t, err)
	assert.Equal(t, int32(12), resp.GetAggregatedPayloadSize(), "every message reached the handler")

	stream, err = h.client.StreamingInputCall(outgoing(peerA))
	require.NoError(t, err)
	for _, size := range []int{1, 2} { // 10, then over
		if err := stream.Send(&testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: make([]byte, size)}}); err != nil {
			break // the server ended the stream
		}
	}
	_, err = stream.CloseAndRecv()
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "a message over the limit ends the stream: %v", err)
	ri, qf := details(t, err)
	require.NotNil(t, ri)
	assert.Equal(t, time.Minute, ri.GetRetryDelay().AsDuration())
	assert.Equal(t, "default", qf.GetViolations()[0].GetSubject())
	tr := stream.Trailer()
	assert.Equal(t, []string{`"default";r=0;t=60`}, tr.Get("ratelimit"), "the fields of the denial go in the trailer")
	assert.Equal(t, []string{"60"}, tr.Get("retry-after"))
}

func TestStreamMessagesPerKey(t *testing.T) {
	clk := core.NewManualClock(t0)
	p := mustPolicy(t, newLimiter(t, clk, core.FixedWindow, core.PerMinute(2)))
	ic, err := grpcmw.Middleware(p, grpcmw.WithMessages())
	require.NoError(t, err)
	h := start(t, ic)
	stream, err := h.client.FullDuplexCall(outgoing(peerA))
	require.NoError(t, err)
	require.NoError(t, stream.Send(&testgrpc.StreamingOutputCallRequest{}), "the open spent 1, this message 1")
	_, err = stream.Recv()
	require.NoError(t, err)
	_ = stream.Send(&testgrpc.StreamingOutputCallRequest{})
	_, err = stream.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.NoError(t, h.duplexOpen(peerB), "another peer's stream is not affected")
}

// duplexOpen opens a FullDuplexCall from peer and closes it at once.
func (h *harness) duplexOpen(peerAddr string) error {
	return h.duplex(peerAddr).err
}

// TestMillionMessages sends 1,000,000 tiny messages on one stream, each
// decided (WithMessages): the server's memory stays bounded, and each
// decision is quick.
func TestMillionMessages(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 100_000 // the race detector slows each message tenfold
	}
	clk := core.NewManualClock(t0)
	p := mustPolicy(t, newLimiter(t, clk, core.GCRA, core.Every(int64(n)+1, time.Hour))) // the open and n messages
	ic, err := grpcmw.Middleware(p, grpcmw.WithMessages())
	require.NoError(t, err)
	h := start(t, ic)
	stream, err := h.client.StreamingInputCall(outgoing(peerA))
	require.NoError(t, err)
	msg := &testgrpc.StreamingInputCallRequest{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	for i := range n {
		require.NoError(t, stream.Send(msg), "message %d", i)
	}
	resp, err := stream.CloseAndRecv()
	require.NoError(t, err)
	elapsed := time.Since(began)
	runtime.GC()
	runtime.ReadMemStats(&after)
	assert.Equal(t, int32(n), resp.GetAggregatedPayloadSize(), "every message was admitted and received")
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	assert.Less(t, grown, int64(8<<20), "the heap in use grew %d bytes over %d messages", grown, n)
	t.Logf("%d messages in %s (%s each), heap in use %+d bytes", n, elapsed, elapsed/time.Duration(n), grown)

	r := h.duplex(peerA)
	assert.Equal(t, codes.ResourceExhausted, status.Code(r.err), "the messages were counted: the quota is spent")
}

// TestHeldCallCanceled holds a leaky-bucket call (a real timer of a minute)
// and cancels it from the client: the client gets Canceled, the handler
// never runs, and no goroutine is left behind.
func TestHeldCallCanceled(t *testing.T) {
	check := noGoroutineLeak(t)
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.LeakyBucket, core.Limit{Rate: 1, Period: time.Minute, Burst: 3}))
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA).err, "the first call's turn is now")

	for _, kind := range []string{"unary", "stream"} {
		ctx, cancel := context.WithCancel(outgoing(peerA))
		done := make(chan error, 1)
		go func() {
			if kind == "unary" {
				_, err := h.client.UnaryCall(ctx, &testgrpc.SimpleRequest{})
				done <- err
				return
			}
			stream, err := h.client.FullDuplexCall(ctx)
			if err == nil {
				_, err = stream.Recv()
			}
			done <- err
		}()
		waitHeld(t, h, kind)
		cancel()
		err := <-done
		assert.Equal(t, codes.Canceled, status.Code(err), kind)
	}
	assert.Equal(t, int64(1), h.srv.calls.Load(), "a call canceled while held never reaches its handler")
	h.close(t)
	check()
}

// waitHeld waits, a bounded time, until a call of kind is held on the
// server: its goroutine sits in the policy's wait.
func waitHeld(t *testing.T, h *harness, kind string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		buf := make([]byte, 1<<20)
		if n := runtime.Stack(buf, true); bytes.Contains(buf[:n], []byte("outcome).wait")) {
			return
		}
		time.Sleep(time.Millisecond) // polls; moves no clock under test
	}
	t.Fatalf("the %s call was never held", kind)
}

// TestStreamRecvErrorsPassThrough checks that an error of the stream itself
// (the client's end, io.EOF) reaches the handler as it is under WithMessages.
func TestStreamRecvErrorsPassThrough(t *testing.T) {
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.Middleware(mustPolicy(t, newLimiter(t, clk, core.GCRA, core.PerMinute(100))), grpcmw.WithMessages())
	require.NoError(t, err)
	h := start(t, ic)
	stream, err := h.client.StreamingInputCall(outgoing(peerA))
	require.NoError(t, err)
	resp, err := stream.CloseAndRecv()
	require.NoError(t, err, "io.EOF reached the handler, which answered")
	assert.Equal(t, int32(0), resp.GetAggregatedPayloadSize())
	assert.False(t, errors.Is(err, io.EOF))
}
