package grpcmw_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// TestOddMethodNames sends calls whose full method is not UTF-8, or looks
// like a path that climbs: grpc-go routes them to an unknown-service
// handler, through the stream interceptor; the rules match them in the
// normal form of a path, and nothing panics.
func TestOddMethodNames(t *testing.T) {
	check := noGoroutineLeak(t)
	clk := core.NewManualClock(t0)
	st, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: odd
    match: {prefixes: ["/odd.Service/"]}
    algorithm: fixed-window
    limits: [1/m]
    key: route
`), "rules.yaml")
	require.NoError(t, err)
	set, err := rules.New(st, doc, rules.WithClock(clk))
	require.NoError(t, err)
	ic, err := grpcmw.Middleware(set)
	require.NoError(t, err)
	var methods []string
	unknown := func(_ any, stream grpc.ServerStream) error {
		m, _ := grpc.MethodFromServerStream(stream)
		methods = append(methods, m)
		var in testgrpc.Empty
		if err := stream.RecvMsg(&in); err != nil {
			return err
		}
		return stream.SendMsg(&testgrpc.Empty{})
	}
	h := start(t, ic, grpc.UnknownServiceHandler(unknown))

	for _, method := range []string{"/odd.Service/\xff\xfe", "/odd.Service/../odd.Service/x", "/odd.Service/%2e%2e/y", "/odd.Service/\u00e9"} {
		err := h.conn.Invoke(outgoing(peerA), method, &testgrpc.Empty{}, &testgrpc.Empty{})
		require.NoError(t, err, "%q: the first call passes", method)
		err = h.conn.Invoke(outgoing(peerA), method, &testgrpc.Empty{}, &testgrpc.Empty{})
		st := status.Convert(err)
		assert.Equal(t, codes.ResourceExhausted, st.Code(), "%q: the second is denied, keyed by its own method", method)
		assert.True(t, strings.HasPrefix(st.Message(), "ratewarden: "), "a clear status: %q", st.Message())
	}
	assert.Len(t, methods, 4, "the unknown-service handler ran once per method")
	h.close(t)
	check()
}
