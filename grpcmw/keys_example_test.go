package grpcmw_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/store/memory"
)

// Keys over gRPC are keyfuncs' own, reading the call's metadata: the subject
// of a verified bearer token in "authorization", an API-key entry, any entry.
func ExampleNew_keys() {
	secret := []byte("a secret of at least 32 bytes!!!")
	bearer, _ := jwtkey.Subject(jwtkey.WithHMACSecret(secret))
	apiKey, _ := keyfuncs.Header("x-api-key")
	tenant, _ := keyfuncs.Header("x-tenant")

	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(100))
	for _, key := range []keyfuncs.Func{bearer, apiKey, tenant} {
		_, err := grpcmw.New(lim, httplimit.WithKey(key))
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// <nil>
	// <nil>
}

// Behind a gateway (Envoy, a load balancer) that names the client in
// x-forwarded-for metadata: the entry is believed only from the gateway's
// addresses; any other peer is keyed by its own address, whatever it sends.
func ExampleNew_trustedGateway() {
	clientIP, _ := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(100))

	ic, err := grpcmw.New(lim, httplimit.WithKey(clientIP))
	fmt.Println(ic != nil, err)
	// Output: true <nil>
}

// userKey is where the examples' authentication interceptor stores the user.
type userKey struct{}

// A value an authentication interceptor, run before the limiter, stored in
// the call's context: keyfuncs.ContextValue reads it.
func ExampleNew_contextValue() {
	user, _ := keyfuncs.ContextValue(userKey{})
	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.PerMinute(1))
	ic, _ := grpcmw.New(lim, httplimit.WithKey(user))
	auth := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return next(context.WithValue(ctx, userKey{}, "user-42"), req) // after checking credentials
	}
	client, _, stop := serve(grpc.NewServer(grpc.ChainUnaryInterceptor(auth, ic.UnaryServerInterceptor())))
	defer stop()

	for range 2 {
		_, err := client.EmptyCall(context.Background(), &testgrpc.Empty{})
		fmt.Println(status.Code(err))
	}
	// Output:
	// OK
	// ResourceExhausted
}

// Each message a stream receives is decided too, at a cost of its own: here
// the cost of a message is its payload's size, and opening the stream costs
// nothing.
func ExampleWithMessages() {
	byPayload := httplimit.WithCost(func(r keyfuncs.Request) int64 {
		m, ok := grpcmw.Message(r)
		if !ok {
			return 0 // the call that opens the stream
		}
		if req, ok := m.(*testgrpc.StreamingInputCallRequest); ok {
			return int64(len(req.GetPayload().GetBody()))
		}
		return 1
	})
	store, _ := memory.New()
	defer store.Close()
	lim, _ := core.NewLimiter(store, core.GCRA, core.Every(1<<20, 60e9)) // 1 MiB a minute
	policy, _ := httplimit.New(lim, byPayload)

	limiter, err := grpcmw.Middleware(policy, grpcmw.WithMessages())
	fmt.Println(limiter != nil, err)
	// Output: true <nil>
}

// The key a client is limited by, for the operator's Reset: View presents a
// call as the interceptors do.
func ExampleView() {
	apiKey, _ := keyfuncs.Header("x-api-key")
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-api-key", "k-123"))
	key, err := apiKey(grpcmw.View(ctx, "/pkg.Service/Method"))
	fmt.Println(key, err)
	// Output: k-123 <nil>
}

// An *Interceptor is a go-grpc-middleware v2 ratelimit.Limiter: its Limit
// decides the call of a context, as the interceptors do.
func ExampleInterceptor_Limit() {
	var limiter interface {
		Limit(ctx context.Context) error
	} = grpcmw.PerIP("1/m")
	check := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if err := limiter.Limit(ctx); err != nil {
			return nil, err // go-grpc-middleware answers ResourceExhausted with err's text
		}
		return next(ctx, req)
	}
	client, _, stop := serve(grpc.NewServer(grpc.UnaryInterceptor(check)))
	defer stop()

	for range 2 {
		_, err := client.EmptyCall(context.Background(), &testgrpc.Empty{})
		fmt.Println(status.Code(err))
	}
	// Output:
	// OK
	// ResourceExhausted
}
