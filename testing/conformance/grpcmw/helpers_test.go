package grpcmw_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// t0 is the instant the tests' clocks start at: a minute boundary, so fixed
// windows start with it.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// peerKey is the metadata entry whose value the test server makes the call's
// peer address before the limiter runs, as adaptertest's X-Test-Peer does:
// one bufconn client acts as many clients.
const peerKey = "x-test-peer"

// testServer is the grpc.testing.TestService the tests limit. UnaryCall
// answers with the status its request's response_status asks for;
// StreamingInputCall counts what it receives; FullDuplexCall echoes.
type testServer struct {
	testgrpc.UnimplementedTestServiceServer
	calls    atomic.Int64 // handlers that ran
	decision atomic.Pointer[core.Decision]
}

func (s *testServer) seen(ctx context.Context) {
	s.calls.Add(1)
	if d, ok := httplimit.DecisionFromContext(ctx); ok {
		s.decision.Store(&d)
	}
}

func (s *testServer) EmptyCall(ctx context.Context, _ *testgrpc.Empty) (*testgrpc.Empty, error) {
	s.seen(ctx)
	return &testgrpc.Empty{}, nil
}

func (s *testServer) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	s.seen(ctx)
	if rs := req.GetResponseStatus(); rs != nil && rs.Code != 0 {
		return nil, status.Error(codes.Code(rs.Code), rs.Message)
	}
	return &testgrpc.SimpleResponse{}, nil
}

func (s *testServer) CacheableUnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return s.UnaryCall(ctx, req)
}

func (s *testServer) StreamingInputCall(stream grpc.ClientStreamingServer[testgrpc.StreamingInputCallRequest, testgrpc.StreamingInputCallResponse]) error {
	s.seen(stream.Context())
	var n int32
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: n})
		}
		if err != nil {
			return err
		}
		n += int32(len(req.GetPayload().GetBody())) + 1
	}
}

func (s *testServer) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	s.seen(stream.Context())
	for {
		_, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
}

// harness is a real gRPC server and client over bufconn.
type harness struct {
	srv    *testServer
	conn   *grpc.ClientConn
	client testgrpc.TestServiceClient
	stop   func() // closes the client and stops the server, once
}

// close stops the server and closes the client now, before the test ends.
func (h *harness) close(t testing.TB) {
	t.Helper()
	h.stop()
}

// start serves a testServer behind ic's interceptors (after the one that
// sets the peer from peerKey) on bufconn, with extra server options, and
// returns a connected client. Everything stops when the test ends.
func start(t testing.TB, ic *grpcmw.Interceptor, extra ...grpc.ServerOption) *harness {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unaryPeer),
		grpc.ChainStreamInterceptor(streamPeer),
	}
	if ic != nil {
		opts = append(opts, ic.ServerOptions()...)
	}
	s := grpc.NewServer(append(opts, extra...)...)
	h := &harness{srv: &testServer{}}
	testgrpc.RegisterTestServiceServer(s, h.srv)
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	h.stop = sync.OnceFunc(func() {
		_ = conn.Close()
		s.Stop()
	})
	t.Cleanup(h.stop)
	h.conn, h.client = conn, testgrpc.NewTestServiceClient(conn)
	return h
}

// withPeer returns ctx with the peer its peerKey metadata names, if any.
func withPeer(ctx context.Context) context.Context {
	v := metadata.ValueFromIncomingContext(ctx, peerKey)
	if len(v) == 0 {
		return ctx
	}
	ap, err := netip.ParseAddrPort(v[0])
	if err != nil {
		return peer.NewContext(ctx, &peer.Peer{Addr: unixAddr(v[0])})
	}
	return peer.NewContext(ctx, &peer.Peer{Addr: net.TCPAddrFromAddrPort(ap)})
}

// unixAddr is a unix-socket peer's address, as net reports it.
func unixAddr(name string) net.Addr { return &net.UnixAddr{Name: name, Net: "unix"} }

func unaryPeer(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(withPeer(ctx), req)
}

func streamPeer(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &ctxStream{ss, withPeer(ss.Context())})
}

// ctxStream is a ServerStream with another context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// outgoing returns a context whose call carries the metadata kv (pairs) and
// comes from peer (none when "").
func outgoing(peerAddr string, kv ...string) context.Context {
	if peerAddr != "" {
		kv = append(kv, peerKey, peerAddr)
	}
	return metadata.NewOutgoingContext(context.Background(), metadata.Pairs(kv...))
}

// result is what a client learnt from one unary call.
type result struct {
	header metadata.MD
	err    error
}

// invoke calls the unary method fullMethod of the test server or the
// health service from peer with the metadata kv, asking UnaryCall and
// CacheableUnaryCall for the response code code.
func (h *harness) invoke(fullMethod string, code codes.Code, peerAddr string, kv ...string) result {
	var req, resp any = &testgrpc.Empty{}, &testgrpc.Empty{}
	switch fullMethod {
	case testgrpc.TestService_UnaryCall_FullMethodName, testgrpc.TestService_CacheableUnaryCall_FullMethodName:
		sr := &testgrpc.SimpleRequest{}
		if code != codes.OK {
			sr.ResponseStatus = &testgrpc.EchoStatus{Code: int32(code), Message: "asked for"}
		}
		req, resp = sr, &testgrpc.SimpleResponse{}
	case healthpb.Health_Check_FullMethodName:
		req, resp = &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}
	}
	var hdr metadata.MD
	err := h.conn.Invoke(outgoing(peerAddr, kv...), fullMethod, req, resp, grpc.Header(&hdr))
	return result{hdr, err}
}

// duplex opens a FullDuplexCall from peer, sends one message, closes and
// reads until the stream ends: its header and its status (nil for OK).
func (h *harness) duplex(peerAddr string, kv ...string) result {
	stream, err := h.client.FullDuplexCall(outgoing(peerAddr, kv...))
	if err != nil {
		return result{err: err}
	}
	_ = stream.Send(&testgrpc.StreamingOutputCallRequest{})
	_ = stream.CloseSend()
	for err == nil {
		_, err = stream.Recv()
	}
	hdr, _ := stream.Header()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return result{hdr, err}
}

// field returns the first value of a header metadata entry, "" when absent.
func (r result) field(key string) string {
	if v := r.header.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// details returns the RetryInfo and QuotaFailure of err's status, as a
// client reads them.
func details(t *testing.T, err error) (*errdetails.RetryInfo, *errdetails.QuotaFailure) {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok, "a status error: %v", err)
	var ri *errdetails.RetryInfo
	var qf *errdetails.QuotaFailure
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			ri = d
		case *errdetails.QuotaFailure:
			qf = d
		}
	}
	return ri, qf
}

// noGoroutineLeak checks, when the test ends, that the number of goroutines
// came back to what it was when it was called (with the harness closed),
// waiting a bounded time for those that are ending.
func noGoroutineLeak(t *testing.T) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		n := runtime.NumGoroutine()
		for n > before && time.Now().Before(deadline) {
			runtime.Gosched()
			time.Sleep(10 * time.Millisecond) // waits for goroutines to end; moves no clock under test
			n = runtime.NumGoroutine()
		}
		assert.LessOrEqual(t, n, before, "goroutines back to baseline")
	}
}

// peerA and peerB are two clients' addresses.
const (
	peerA = "192.0.2.1:1234"
	peerB = "192.0.2.2:1234"
)
