package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/examples/internal/servertest"
	"github.com/ratewarden/ratewarden/rules"
)

// startLine is the one line the server writes when it serves.
var startLine = regexp.MustCompile(`^(.*); listening on grpc://(127\.0\.0\.1:[0-9]+)(?:, metrics on (http://127\.0\.0\.1:[0-9]+/metrics))?\n$`)

// server is the example server under test, run as main runs it, on a
// loopback listener, with a real gRPC client.
type server struct {
	// line is what it wrote to stderr when it started serving.
	line string
	// metricsURL is the URL of its metrics under -metrics-addr.
	metricsURL string
	// log is its error log (stderr in a real run).
	log     *servertest.LockedBuffer
	reloads chan rules.Reload
	client  testgrpc.TestServiceClient
	health  healthpb.HealthClient
	reflect reflectionpb.ServerReflectionClient
}

// startServer parses args (after -addr 127.0.0.1:0) as the server's command
// line, builds its setup and runs it until the test ends, when it checks that
// the server stopped cleanly.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	c, err := flags.ParseGRPC("grpc", append([]string{"-addr", "127.0.0.1:0"}, args...), io.Discard)
	require.NoError(t, err)
	s := &server{log: &servertest.LockedBuffer{}, reloads: make(chan rules.Reload, 16)}
	c.ErrorLog = s.log
	c.OnReload = func(r rules.Reload) { s.reloads <- r }
	setup, err := c.Build()
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, setup, pw) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "the server stops cleanly")
		assert.NoError(t, setup.Close())
	})
	// The line is written once the listeners are open: reading it waits for
	// that, and nothing else is ever written there.
	s.line, err = bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	_ = pr.Close()
	m := startLine.FindStringSubmatch(s.line)
	require.NotNil(t, m, "the start line: %q", s.line)
	s.metricsURL = m[3]

	conn, err := grpc.NewClient(m[2], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	s.client, s.health = testgrpc.NewTestServiceClient(conn), healthpb.NewHealthClient(conn)
	s.reflect = reflectionpb.NewServerReflectionClient(conn)
	return s
}

// result is what the client learnt from one call: its header metadata and
// its status (nil for OK).
type result struct {
	header metadata.MD
	err    error
}

// field returns the first value of a header metadata entry, "" when absent.
func (r result) field(key string) string {
	if v := r.header.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// code returns the call's code.
func (r result) code() codes.Code { return status.Code(r.err) }

// withMD returns a context whose calls carry the metadata kv (pairs).
func withMD(kv ...string) context.Context {
	return metadata.NewOutgoingContext(context.Background(), metadata.Pairs(kv...))
}

// empty calls EmptyCall with the metadata kv.
func (s *server) empty(t *testing.T, kv ...string) result {
	t.Helper()
	var hdr metadata.MD
	_, err := s.client.EmptyCall(withMD(kv...), &testgrpc.Empty{}, grpc.Header(&hdr))
	return result{hdr, err}
}

// unary calls UnaryCall with the metadata kv, asking for the code asked.
func (s *server) unary(t *testing.T, asked codes.Code, kv ...string) result {
	t.Helper()
	req := &testgrpc.SimpleRequest{ResponseSize: 8}
	if asked != codes.OK {
		req.ResponseStatus = &testgrpc.EchoStatus{Code: int32(asked), Message: "asked for"}
	}
	var hdr metadata.MD
	resp, err := s.client.UnaryCall(withMD(kv...), req, grpc.Header(&hdr))
	if err == nil {
		assert.Len(t, resp.GetPayload().GetBody(), 8, "the payload asked for")
	}
	return result{hdr, err}
}

// duplex opens a FullDuplexCall with the metadata kv, sends two requests,
// reads their answers and closes: its header and status.
func (s *server) duplex(t *testing.T, kv ...string) result {
	t.Helper()
	stream, err := s.client.FullDuplexCall(withMD(kv...))
	require.NoError(t, err)
	answers := 0
	for range 2 {
		if err = stream.Send(&testgrpc.StreamingOutputCallRequest{}); err != nil {
			break
		}
		if _, err = stream.Recv(); err != nil {
			break
		}
		answers++
	}
	if err == nil {
		require.NoError(t, stream.CloseSend())
		_, err = stream.Recv()
		require.ErrorIs(t, err, io.EOF)
		assert.Equal(t, 2, answers)
		err = nil
	} else if errors.Is(err, io.EOF) {
		_, err = stream.Recv() // the status that ended the stream
	}
	hdr, _ := stream.Header()
	return result{hdr, err}
}

// assertServing checks that the health service answers SERVING, with no
// rate-limit metadata: no policy decided the call.
func (s *server) assertServing(t *testing.T, kv ...string) {
	t.Helper()
	var hdr metadata.MD
	resp, err := s.health.Check(withMD(kv...), &healthpb.HealthCheckRequest{}, grpc.Header(&hdr))
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	assertUnlimited(t, result{header: hdr}, "a health check")
}

// assertReflection checks that server reflection lists the services, as
// grpcurl asks it, with no rate-limit metadata.
func (s *server) assertReflection(t *testing.T) {
	t.Helper()
	stream, err := s.reflect.ServerReflectionInfo(context.Background())
	require.NoError(t, err)
	require.NoError(t, stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	assert.Subset(t, names, []string{"grpc.testing.TestService", "grpc.health.v1.Health"})
	hdr, err := stream.Header()
	require.NoError(t, err)
	assertUnlimited(t, result{header: hdr}, "reflection")
}

// rateLimitFields are the metadata entries a decided call carries.
var rateLimitFields = []string{"ratelimit-policy", "ratelimit", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"}

// assertUnlimited checks that r has none of the rate-limit fields.
func assertUnlimited(t *testing.T, r result, msg string) {
	t.Helper()
	for _, name := range rateLimitFields {
		assert.Empty(t, r.header.Get(name), "%s: %s", msg, name)
	}
}

// assertDenied checks that r is a denial by the policy named policy: the
// code, RetryInfo (a wait above 0, at most maxWait), a QuotaFailure naming
// the policy, and the retry-after field.
func assertDenied(t *testing.T, r result, policy string, maxWait time.Duration) {
	t.Helper()
	st, ok := status.FromError(r.err)
	require.True(t, ok, "a status error: %v", r.err)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "the status: %v", r.err)
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
	require.NotNil(t, ri, "RetryInfo")
	wait := ri.GetRetryDelay().AsDuration()
	assert.Positive(t, wait, "the wait")
	assert.LessOrEqual(t, wait, maxWait, "the wait")
	require.NotNil(t, qf, "QuotaFailure")
	require.Len(t, qf.GetViolations(), 1)
	assert.Equal(t, policy, qf.GetViolations()[0].GetSubject())
	assert.NotEmpty(t, r.field("retry-after"), "the retry-after field")
}

// getMetrics reads the server's metrics page.
func (s *server) getMetrics(t *testing.T, path string) (int, string) {
	t.Helper()
	require.NotEmpty(t, s.metricsURL, "the server serves metrics")
	u := s.metricsURL[:len(s.metricsURL)-len(flags.MetricsPath)] + path
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}
