package grpcmw_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
)

var jwtSecret = []byte("0123456789abcdef0123456789abcdef")

// hs256 returns a token with claims, signed with jwtSecret.
func hs256(claims string) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, jwtSecret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestKeyBearerJWT(t *testing.T) {
	clk := core.NewManualClock(t0)
	key, err := jwtkey.Subject(jwtkey.WithHMACSecret(jwtSecret), jwtkey.WithClock(clk))
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key))
	require.NoError(t, err)
	h := start(t, ic)

	alice := "Bearer " + hs256(`{"sub":"alice"}`)
	require.NoError(t, h.unary(codes.OK, peerA, "authorization", alice).err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, peerB, "authorization", alice).err), "the subject is the key, whatever the peer")
	require.NoError(t, h.unary(codes.OK, peerA, "authorization", "Bearer "+hs256(`{"sub":"bob"}`)).err)

	forged := strings.TrimSuffix(hs256(`{"sub":"carol"}`), "A") + "B"
	for name, v := range map[string]string{
		"no token":       "",
		"another scheme": "Basic YWxpY2U6c2VjcmV0",
		"malformed":      "Bearer not.a.jwt",
		"three dots":     "Bearer ...",
		"forged":         "Bearer " + forged,
		"unsigned":       "Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory"}`)) + ".",
		"too long":       "Bearer " + strings.Repeat("a", 9<<10),
	} {
		var kv []string
		if v != "" {
			kv = []string{"authorization", v}
		}
		r := h.unary(codes.OK, peerA, kv...)
		assert.Equal(t, codes.Unauthenticated, status.Code(r.err), name)
		assert.NotContains(t, status.Convert(r.err).Message(), "mallory", name)
	}
	assert.Equal(t, int64(2), h.srv.calls.Load())
}

func TestKeyTrustedProxies(t *testing.T) {
	clk := core.NewManualClock(t0)
	key, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8", keyfuncs.TrustUnixSocket))
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key), httplimit.WithLogger(discard))
	require.NoError(t, err)
	h := start(t, ic)
	const client = "203.0.113.7"

	require.NoError(t, h.unary(codes.OK, "10.0.0.5:443", "x-forwarded-for", client).err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, "10.9.9.9:443", "x-forwarded-for", "198.51.100.1, "+client).err),
		"another gateway names the same client: walked from the right")
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, "@", "x-forwarded-for", client).err),
		"a trusted unix-socket gateway names it too")
	require.NoError(t, h.unary(codes.OK, peerA, "x-forwarded-for", client).err,
		"an untrusted peer's x-forwarded-for is never believed: it is keyed by its own address")
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, peerA, "x-forwarded-for", "198.51.100.9").err),
		"and its own address is spent, whatever it claims")
	assert.Equal(t, codes.Internal, status.Code(h.unary(codes.OK, "@").err),
		"a unix-socket peer whose gateway names no client: the same key error as over HTTP")
}

func TestKeyMethodAndContextValue(t *testing.T) {
	clk := core.NewManualClock(t0)
	type userKey struct{}
	user, err := keyfuncs.ContextValue(userKey{})
	require.NoError(t, err)
	key, err := keyfuncs.Compose(user, keyfuncs.Route())
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key))
	require.NoError(t, err)
	auth := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if v := metadata.ValueFromIncomingContext(ctx, "x-user"); len(v) > 0 {
			ctx = context.WithValue(ctx, userKey{}, v[0]) // what an authentication interceptor does
		}
		return next(ctx, req)
	}
	h := start(t, nil, grpc.ChainUnaryInterceptor(auth, ic.UnaryServerInterceptor()))

	require.NoError(t, h.unary(codes.OK, peerA, "x-user", "u1").err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, peerB, "x-user", "u1").err), "per user and method")
	require.NoError(t, h.invoke(emptyCall, codes.OK, peerA, "x-user", "u1").err, "another method has its own budget")
	require.NoError(t, h.unary(codes.OK, peerA, "x-user", "u2").err, "another user too")
	assert.Equal(t, codes.Unauthenticated, status.Code(h.unary(codes.OK, peerA).err), "no user: a key error")
}

func TestViewAndReset(t *testing.T) {
	clk := core.NewManualClock(t0)
	key, err := keyfuncs.Header("x-api-key")
	require.NoError(t, err)
	p := mustPolicy(t, newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key))
	ic, err := grpcmw.Middleware(p)
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA, "x-api-key", "k1").err)
	require.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, peerA, "x-api-key", "k1").err))

	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-api-key", "k1"))
	v := grpcmw.View(ctx, unaryCall)
	k, err := key(v)
	require.NoError(t, err)
	assert.Equal(t, "k1", k)
	assert.Equal(t, unaryCall, v.Route())
	assert.Equal(t, "POST", v.Method())
	assert.Equal(t, "", v.RemoteAddr(), "no peer in ctx")
	_, ok := grpcmw.Message(v)
	assert.False(t, ok)
	require.NoError(t, p.Reset(context.Background(), k))
	require.NoError(t, h.unary(codes.OK, peerA, "x-api-key", "k1").err, "reset: the operator unblocked the client")
}

func TestObserverSeesCalls(t *testing.T) {
	clk := core.NewManualClock(t0)
	var mu sync.Mutex
	var seen []string
	obs := httplimit.ObserverFunc(func(e httplimit.Event) {
		route := ""
		if e.Request != nil {
			route = e.Request.Route()
		}
		mu.Lock()
		seen = append(seen, e.Outcome.String()+" "+route)
		mu.Unlock()
	})
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithObserver(obs),
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return strings.HasPrefix(r.Route(), "/grpc.health.v1.Health/") }))
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA).err)
	require.Error(t, h.unary(codes.OK, peerA).err)
	require.NoError(t, h.invoke(healthCheck, codes.OK, peerA).err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"allowed " + unaryCall, "denied " + unaryCall, "skipped " + healthCheck}, seen)
}

// TestPerIPOverTCP runs the one-line form over a real loopback connection:
// the peer is 127.0.0.1, keyed as it is.
func TestPerIPOverTCP(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var peerSeen string
	record := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if p, ok := peer.FromContext(ctx); ok {
			peerSeen = p.Addr.String()
		}
		return next(ctx, req)
	}
	s := grpc.NewServer(append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(record)}, grpcmw.PerIP("2/m").ServerOptions()...)...)
	srv := &testServer{}
	testgrpc.RegisterTestServiceServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := testgrpc.NewTestServiceClient(conn)
	var hdr metadata.MD
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{}, grpc.Header(&hdr))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(peerSeen, "127.0.0.1:"), peerSeen)
	assert.Equal(t, []string{`"default";r=1;t=30`}, hdr.Get("ratelimit"), "GCRA: the quota is whole again in 30 s")
	stream, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.Error(t, err) // io.EOF
	_, err = client.EmptyCall(context.Background(), &testgrpc.Empty{})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "unary calls and streams share the budget")
}

// The call hands keyfuncs.IP the peer's address (keyfuncs.PeerIPRequest),
// and the key is the one the peer's text gives, for IPv4, IPv4-mapped and
// IPv6 peers (a zone dropped, IPv6 grouped by /64); a unix-socket peer has
// no address and is still no IP.
func TestPeerIPKeys(t *testing.T) {
	ipKey, err := keyfuncs.IP()
	require.NoError(t, err)
	var mu sync.Mutex
	var keys []string
	ic, err := grpcmw.New(newLimiter(t, core.NewManualClock(t0), core.FixedWindow, core.PerMinute(100)), httplimit.WithLogger(discard),
		httplimit.WithKey(func(r keyfuncs.Request) (string, error) {
			_, isAddr := r.(keyfuncs.PeerIPRequest)
			assert.True(t, isAddr, "the call gives the peer's address")
			k, err := ipKey(r)
			mu.Lock()
			keys = append(keys, k)
			mu.Unlock()
			return k, err
		}))
	require.NoError(t, err)
	h := start(t, ic)
	for peerAddr, want := range map[string]string{
		"203.0.113.7:443":            "203.0.113.7",
		"[::ffff:198.51.100.9]:443":  "198.51.100.9",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:443":         "fe80::/64",
	} {
		mu.Lock()
		keys = keys[:0]
		mu.Unlock()
		require.NoError(t, h.unary(codes.OK, peerAddr).err, peerAddr)
		mu.Lock()
		assert.Equal(t, []string{want}, keys, peerAddr)
		mu.Unlock()
	}
	assert.Equal(t, codes.Internal, status.Code(h.unary(codes.OK, "@").err), "a unix-socket peer is no IP")
}
