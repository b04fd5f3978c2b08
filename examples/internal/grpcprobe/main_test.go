package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// service answers EmptyCall, UnaryCall with the status asked for, and
// FullDuplexCall by echoing.
type service struct {
	testgrpc.UnimplementedTestServiceServer
}

func (service) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}

func (service) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	if c := req.GetResponseStatus().GetCode(); c != 0 {
		return nil, status.Error(codes.Code(c), req.GetResponseStatus().GetMessage())
	}
	return &testgrpc.SimpleResponse{}, nil
}

func (service) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	for {
		if _, err := stream.Recv(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
}

// serve starts a server behind ic on a loopback port, until the test ends,
// and returns its address.
func serve(t *testing.T, ic *grpcmw.Interceptor) string {
	t.Helper()
	srv := grpc.NewServer(ic.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(srv, service{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// probe runs the command on args and returns its status and outputs.
func probe(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestChecksHold(t *testing.T) {
	ic, err := grpcmw.Middleware(policy(t, "3/m", nil, httplimit.WithSkip(func(r keyfuncs.Request) bool {
		return strings.HasPrefix(r.Path(), "/grpc.health.v1.Health/")
	})))
	require.NoError(t, err)
	addr := serve(t, ic)
	code, out, errOut := probe("-addr", addr, "empty=OK", "stream=OK", "unary/NotFound=NotFound", "unary=ResourceExhausted", "health=SERVING")
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", errOut, out)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "empty: OK\n")
	assert.Contains(t, out, "  ratelimit-policy: \"default\";q=3;w=60\n")
	assert.Contains(t, out, "unary: NotFound: asked for by grpcprobe\n")
	assert.Contains(t, out, "unary: ResourceExhausted: ratewarden: rate limit \"default\" exceeded")
	assert.Contains(t, out, "  RetryInfo: retry_delay ")
	assert.Contains(t, out, "  QuotaFailure: subject \"default\" quota_id \"default\" quota_value 3\n")
	assert.Contains(t, out, "  retry-after: ")
	assert.True(t, strings.HasSuffix(out, "health: SERVING\n  content-type: application/grpc\n"), "%q", out)
}

// The metadata of -md reaches the server: a key per x-api-key entry.
func TestMetadata(t *testing.T) {
	key, err := keyfuncs.Header("x-api-key")
	require.NoError(t, err)
	ic, err := grpcmw.Middleware(policy(t, "1/m", key))
	require.NoError(t, err)
	addr := serve(t, ic)
	code, _, errOut := probe("-addr", addr, "-md", "x-api-key=k1", "empty=OK", "empty=ResourceExhausted", "stream=ResourceExhausted")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = probe("-addr", addr, "-md", "x-api-key=k2", "empty=OK")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = probe("-addr", addr, "empty=Unauthenticated")
	require.Equal(t, 0, code, errOut)
}

// A check that fails is exit status 1, and the checks after it are not made.
func TestCheckFails(t *testing.T) {
	addr := serve(t, grpcmw.PerIP("1/m"))
	code, out, errOut := probe("-addr", addr, "empty=OK", "empty=OK", "health=SERVING")
	assert.Equal(t, 1, code)
	assert.Equal(t, "grpcprobe: empty=OK: got ResourceExhausted, want OK\n", errOut)
	assert.NotContains(t, out, "health")
}

// A denial that says nothing of when to retry fails the check: go-grpc-
// middleware's plain ResourceExhausted, say.
func TestDenialWithoutDetailsFails(t *testing.T) {
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
		return nil, status.Error(codes.ResourceExhausted, "slow down")
	}))
	testgrpc.RegisterTestServiceServer(srv, service{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	code, _, errOut := probe("-addr", lis.Addr().String(), "empty=ResourceExhausted")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "without a RetryInfo")
}

func TestBadArgs(t *testing.T) {
	for _, args := range [][]string{
		{"empty=OK"},
		{"-addr", "127.0.0.1:1"},
		{"-addr", "127.0.0.1:1", "empty"},
		{"-addr", "127.0.0.1:1", "empty=Fine"},
		{"-addr", "127.0.0.1:1", "unary/Bad=OK"},
		{"-addr", "127.0.0.1:1", "login=OK"},
		{"-addr", "127.0.0.1:1", "health=OK"},
		{"-addr", "127.0.0.1:1", "-timeout", "0s", "empty=OK"},
		{"-addr", "127.0.0.1:1", "-md", "novalue", "empty=OK"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := probe(args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.NotEmpty(t, errOut)
		})
	}
}

// policy is a policy of limit on a memory store, keyed by key (nil for the
// peer's IP), with opts.
func policy(t *testing.T, limit string, key keyfuncs.Func, opts ...httplimit.Option) httplimit.Handler {
	t.Helper()
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	l, err := core.ParseLimit(limit)
	require.NoError(t, err)
	lim, err := core.NewLimiter(st, core.GCRA, l)
	require.NoError(t, err)
	if key != nil {
		opts = append(opts, httplimit.WithKey(key))
	}
	p, err := httplimit.New(lim, opts...)
	require.NoError(t, err)
	return p
}
