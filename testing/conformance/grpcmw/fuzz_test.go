package grpcmw_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// FuzzInterceptor runs the interceptor, under a rules document keyed by a
// trusted gateway's x-forwarded-for and by a bearer token, on any full
// method, metadata value and peer: it never panics, and a call that does not
// go on gets a status the package doc lists.
func FuzzInterceptor(f *testing.F) {
	f.Add("/grpc.testing.TestService/UnaryCall", "203.0.113.7", "Bearer a.b.c", "10.0.0.1")
	f.Add("/odd.Service/\xff%2e%2e/../x", "unknown, 1.2.3.4", "bearer ", "@")
	f.Add("", "[::1]:80", "\x00", "::1")
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(f, err)
	f.Cleanup(func() { _ = st.Close() })
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: gateway
    match: {prefixes: ["/grpc.testing.TestService/"]}
    limits: [3/m]
    key: ip
  - name: token
    match: {paths: ["/odd.Service/{method}"]}
    limits: [3/m]
    key: {jwt_claim: sub}
`), "rules.yaml")
	require.NoError(f, err)
	ip, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8", "unix"))
	require.NoError(f, err)
	set, err := rules.New(st, doc, rules.WithIPKey(ip), rules.WithLogger(discard),
		rules.WithClaimKey(func(claim string) (keyfuncs.Func, error) {
			return jwtkey.Subject(jwtkey.WithHMACSecret(jwtSecret), jwtkey.WithClaim(claim))
		}))
	require.NoError(f, err)
	ic, err := grpcmw.Middleware(set)
	require.NoError(f, err)
	unary := ic.UnaryServerInterceptor()
	allowed := map[codes.Code]bool{codes.ResourceExhausted: true, codes.Unauthenticated: true, codes.Internal: true}
	f.Fuzz(func(t *testing.T, method, xff, auth, peerAddr string) {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.MD{
			"x-forwarded-for": {xff}, "authorization": {auth},
		})
		var addr net.Addr = &net.UnixAddr{Name: peerAddr, Net: "unix"}
		if a := net.ParseIP(peerAddr); a != nil {
			addr = &net.TCPAddr{IP: a, Port: 1}
		}
		ctx = peer.NewContext(grpc.NewContextWithServerTransportStream(ctx, headerSink{}), &peer.Peer{Addr: addr})
		_, err := unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, func(context.Context, any) (any, error) { return nil, nil })
		if err != nil && !allowed[status.Code(err)] {
			t.Fatalf("method %q: unexpected status %v", method, err)
		}
	})
}

// discard is a logger that drops what the policy logs.
var discard = slog.New(slog.DiscardHandler)

var jwtSecret = []byte("0123456789abcdef0123456789abcdef")

// headerSink is a grpc.ServerTransportStream that keeps nothing: it isolates
// what the interceptor itself allocates from what grpc-go's transport does
// with the header metadata it is handed.
type headerSink struct{}

func (headerSink) Method() string               { return unaryCall }
func (headerSink) SetHeader(metadata.MD) error  { return nil }
func (headerSink) SendHeader(metadata.MD) error { return nil }
func (headerSink) SetTrailer(metadata.MD) error { return nil }
