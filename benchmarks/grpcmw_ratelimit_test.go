package benchmarks

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/grpcmw"
)

// This test lives here, not in grpcmw, so that go-grpc-middleware stays out
// of grpcmw's go.mod: grpcmw satisfies its ratelimit.Limiter structurally.

// emptyService answers EmptyCall and echoes FullDuplexCall's stream.
type emptyService struct {
	testgrpc.UnimplementedTestServiceServer
}

func (emptyService) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}

func (emptyService) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return nil
		}
	}
}

// An *grpcmw.Interceptor serves as go-grpc-middleware v2's ratelimit.Limiter,
// behind its real interceptors over a loopback connection: calls over the
// limit get ResourceExhausted with grpcmw's reason in the message, and the
// rate-limit fields reach the client as header metadata, unary calls and
// streams sharing the budget.
func TestGoGRPCMiddlewareRatelimit(t *testing.T) {
	var limiter ratelimit.Limiter = grpcmw.PerIP("2/m")
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(ratelimit.UnaryServerInterceptor(limiter)),
		grpc.ChainStreamInterceptor(ratelimit.StreamServerInterceptor(limiter)),
	)
	testgrpc.RegisterTestServiceServer(srv, emptyService{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := testgrpc.NewTestServiceClient(conn)

	var hdr metadata.MD
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
	require.NoError(t, err)
	assert.Equal(t, []string{`"default";q=2;w=60`}, hdr.Get("ratelimit-policy"))
	assert.Equal(t, []string{`"default";r=1;t=30`}, hdr.Get("ratelimit"))

	stream, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	assert.ErrorIs(t, err, io.EOF, "the stream ran")

	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
	st := status.Convert(err)
	assert.Equal(t, codes.ResourceExhausted, st.Code())
	assert.Contains(t, st.Message(), "grpc_ratelimit middleware")
	assert.Contains(t, st.Message(), `ratewarden: rate limit "default" exceeded; retry after`)
	assert.Equal(t, []string{"30"}, hdr.Get("retry-after"), "the fields reach the client through grpc.SetHeader")
}

// go-grpc-middleware v2's ratelimit interceptors, with a grpcmw interceptor
// as their Limiter: unary calls and streams share one budget per client IP.
func Example_goGRPCMiddlewareRatelimit() {
	limiter := grpcmw.PerIP("100/m")
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(ratelimit.UnaryServerInterceptor(limiter)),
		grpc.ChainStreamInterceptor(ratelimit.StreamServerInterceptor(limiter)),
	)
	defer srv.Stop()
	fmt.Println(len(srv.GetServiceInfo()))
	// Output: 0
}
