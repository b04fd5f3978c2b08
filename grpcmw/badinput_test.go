package grpcmw_test

import (
	"context"
	"fmt"
	"strings"
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
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// TestHugeMetadata sends 10,000 metadata entries and a 1 MiB value. grpc-go's
// server takes header lists up to 16 MiB by default, so the library sees
// them: the key function reads the 1 MiB API key, which the store keeps as
// its 50-byte hash, and every entry is looked up without a copy of the lot.
// A server configured with a smaller grpc.MaxHeaderListSize refuses the call
// before any interceptor runs.
func TestHugeMetadata(t *testing.T) {
	check := noGoroutineLeak(t)
	clk := core.NewManualClock(t0)
	key, err := keyfuncs.Header("x-api-key")
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key))
	require.NoError(t, err)
	h := start(t, ic)

	kv := make([]string, 0, 2*10_001)
	for i := range 10_000 {
		kv = append(kv, fmt.Sprintf("x-entry-%d", i), "v")
	}
	huge := strings.Repeat("k", 1<<20)
	kv = append(kv, "x-api-key", huge)
	r := h.unary(codes.OK, peerA, kv...)
	require.NoError(t, r.err)
	assert.Equal(t, `"default";r=0;t=60`, r.field("ratelimit"))
	r = h.unary(codes.OK, peerB, "x-api-key", huge)
	assert.Equal(t, codes.ResourceExhausted, status.Code(r.err), "the 1 MiB key, hashed, is the same client")
	r = h.unary(codes.OK, peerB, "x-api-key", huge[1:])
	assert.NoError(t, r.err, "a different key is another client")

	small := start(t, ic, grpc.MaxHeaderListSize(64<<10))
	r = small.unary(codes.OK, peerA, "x-api-key", huge)
	require.Error(t, r.err, "the server refuses the header list first")
	assert.NotEqual(t, codes.ResourceExhausted, status.Code(r.err))
	assert.Equal(t, int64(0), small.srv.calls.Load())
	h.close(t)
	small.close(t)
	check()
}

// TestCanceledBeforeDecision sends a call whose context is already over: the
// client gives up at once, and the server is left with nothing running.
func TestCanceledBeforeDecision(t *testing.T) {
	check := noGoroutineLeak(t)
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.GCRA, core.PerMinute(5)))
	require.NoError(t, err)
	h := start(t, ic)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(), metadata.Pairs(peerKey, peerA)))
	cancel()
	_, err = h.client.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	assert.Equal(t, codes.Canceled, status.Code(err))
	h.close(t)
	check()
}
