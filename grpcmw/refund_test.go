package grpcmw_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// rateLimitFields returns md's rate-limit fields, each value joined.
func rateLimitFields(md metadata.MD) map[string][]string {
	out := map[string][]string{}
	for _, k := range []string{"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-policy", "ratelimit", "retry-after"} {
		if v := md.Get(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// fields are the rate-limit fields of limit "default", 2 a minute.
func fields(remaining, reset string) map[string][]string {
	return map[string][]string{
		"x-ratelimit-limit":     {"2"},
		"x-ratelimit-remaining": {remaining},
		"x-ratelimit-reset":     {reset},
		"ratelimit-policy":      {`"default";q=2;w=60`},
		"ratelimit":             {`"default";r=` + remaining + ";t=" + reset},
	}
}

// A refunded call's header tells the quota as it was admitted (gRPC sent it
// before the status was known); its trailer tells the quota after the
// refund. A failure keeps what it spent, and gets no rate-limit trailer.
func TestRefundedCallsTrailerTellsTheQuotaAfterIt(t *testing.T) {
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(2)),
		httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	h := start(t, ic)
	call := func(code codes.Code) (header, trailer metadata.MD, err error) {
		req := &testgrpc.SimpleRequest{}
		if code != codes.OK {
			req.ResponseStatus = &testgrpc.EchoStatus{Code: int32(code), Message: "asked for"}
		}
		_, err = h.client.UnaryCall(outgoing(peerA), req, grpc.Header(&header), grpc.Trailer(&trailer))
		return header, trailer, err
	}
	for range 3 {
		header, trailer, err := call(codes.OK)
		require.NoError(t, err)
		assert.Equal(t, fields("1", "60"), rateLimitFields(header), "the header went out before the refund")
		assert.Equal(t, fields("2", "0"), rateLimitFields(trailer), "the trailer tells the refund")
	}
	header, trailer, err := call(codes.PermissionDenied)
	assert.Equal(t, codes.PermissionDenied, status.Code(err))
	assert.Equal(t, fields("1", "60"), rateLimitFields(header))
	assert.Empty(t, rateLimitFields(trailer), "a failure is given nothing back")

	stream, err := h.client.FullDuplexCall(outgoing(peerA))
	require.NoError(t, err)
	require.NoError(t, stream.Send(&testgrpc.StreamingOutputCallRequest{}))
	require.NoError(t, stream.CloseSend())
	for err == nil {
		_, err = stream.Recv()
	}
	require.True(t, errors.Is(err, io.EOF), "the stream ends with OK: %v", err)
	header, err = stream.Header()
	require.NoError(t, err)
	assert.Equal(t, fields("0", "60"), rateLimitFields(header))
	assert.Equal(t, fields("1", "60"), rateLimitFields(stream.Trailer()), "a stream's trailer tells its refund")
}
