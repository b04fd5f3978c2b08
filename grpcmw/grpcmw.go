package grpcmw

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// Interceptor limits the calls of a gRPC server with the HTTP policy: its
// UnaryServerInterceptor and StreamServerInterceptor share one
// httplimit.Handler, and so one budget per client. Build one with New,
// Middleware or PerIP. It is safe for concurrent use.
type Interceptor struct {
	h        httplimit.Handler
	messages bool
}

// Option configures what Middleware builds beyond the policy: how streams
// are limited.
type Option func(*Interceptor) error

// WithMessages decides each message a stream receives too, besides the call
// that opens it: the stream's handler gets the message from RecvMsg only
// once the policy admitted it, under the key and the policies of the call.
// A message spends the policy's cost (httplimit.WithCost, 1 by default),
// which may weigh the message: Message(r) gives it to the cost function,
// and reports false for the decision that opens the call (a cost of 0 there
// spends nothing on opening).
//
// A message over the limit ends the stream: RecvMsg returns the denial's
// ResourceExhausted status, with its RetryInfo and QuotaFailure, and so does
// every later RecvMsg and SendMsg, so that the handler, returning the error
// as handlers do, ends the call with it; the rate-limit fields go in the
// trailer, since the header may already be sent. Under the leaky bucket a
// message within the queue waits for its turn instead (the stream is paced),
// and a client that cancels meanwhile ends the stream with Canceled.
//
// A message's cost is never given back (httplimit.WithRefund, count:
// failures): a stream has one status, known at its end, and keeping what a
// million messages spent until then would grow without bound. A message's
// decision allocates nothing on the memory store, so a long stream stays
// bounded in memory. Unary calls are not affected.
func WithMessages() Option {
	return func(i *Interceptor) error { i.messages = true; return nil }
}

// New returns the interceptors applying lim to every call, with the
// behaviour of httplimit.Policy configured by opts: the key is the peer's IP
// unless httplimit.WithKey says otherwise. It returns an error wrapping
// core.ErrInvalidOption for a nil limiter or an invalid option.
func New(lim *core.Limiter, opts ...httplimit.Option) (*Interceptor, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("grpcmw: %w", err)
	}
	return &Interceptor{h: p}, nil
}

// Middleware returns the interceptors that run h on every call: a
// *httplimit.Policy the app keeps to call its Reset or Peek, an
// *httplimit.Group, or a rule set (*rules.Set, module
// github.com/ratewarden/ratewarden/rules), whose policies are chosen per call
// by full method ("/pkg.Service/Method", matched as the path of a POST) and
// reloaded without a restart. It returns an error wrapping
// core.ErrInvalidOption for a nil h or a nil option.
func Middleware(h httplimit.Handler, opts ...Option) (*Interceptor, error) {
	if err := httplimit.CheckHandler(h); err != nil {
		return nil, fmt.Errorf("grpcmw: %w", err)
	}
	i := &Interceptor{h: h}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("grpcmw: %w: nil option", core.ErrInvalidOption)
		}
		if err := o(i); err != nil {
			return nil, err
		}
	}
	return i, nil
}

// PerIP returns interceptors that allow each client IP (the peer's address,
// no proxy trusted) limit, such as "100/m", counting unary calls and streams
// alike (see httplimit.MustPerIP for the defaults). It panics on a malformed
// limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) *Interceptor {
	return &Interceptor{h: httplimit.MustPerIP(limit)}
}

// ServerOptions returns the options that install both interceptors on a
// server, chained after any the server has:
//
//	grpc.NewServer(grpcmw.PerIP("100/m").ServerOptions()...)
func (i *Interceptor) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(i.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(i.StreamServerInterceptor()),
	}
}

// UnaryServerInterceptor returns the interceptor that decides each unary
// call before its handler runs. The rate-limit fields are set as header
// metadata (grpc.SetHeader) before the handler runs, so a call carries them
// whatever its handler returns; a call the policy answers returns its status
// (see the package doc) and its handler is not called.
func (i *Interceptor) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return i.unary
}

func (i *Interceptor) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	pass, err := i.decide(ctx, info.FullMethod, func(c *call) {
		if md := c.headerMD(); md != nil {
			_ = grpc.SetHeader(ctx, md) // fails only once the header is sent, by an interceptor before this one
		}
	})
	if err != nil {
		return nil, err
	}
	defer pass.Release() // the in-flight slot, however the handler ends
	if !pass.WantsStatus() {
		return handler(pass.Context(), req)
	}
	hctx, sent := recordUnary(pass.Context()) // what the handler sets, for a settle (settle.go)
	resp, err := handler(hctx, req)
	settle(ctx, info.FullMethod, pass, err, sent, func(md metadata.MD) {
		_ = grpc.SetTrailer(ctx, md) // fails only once the call ended
	})
	return resp, err
}

// StreamServerInterceptor returns the interceptor that decides each stream
// when it opens, before its handler runs, and, under WithMessages, each
// message it receives. The rate-limit fields of the opening decision are
// set with ServerStream.SetHeader; a stream the policy answers returns its
// status and its handler is not called.
func (i *Interceptor) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return i.stream
}

func (i *Interceptor) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	pass, err := i.decide(ctx, info.FullMethod, func(c *call) {
		if md := c.headerMD(); md != nil {
			_ = ss.SetHeader(md)
		}
	})
	if err != nil {
		return err
	}
	defer pass.Release() // the in-flight slot, however the handler ends
	if nctx := pass.Context(); nctx != ctx || i.messages {
		ss = &limitedStream{ServerStream: ss, ctx: nctx, base: ctx, method: info.FullMethod, i: i}
	}
	var sent *sentMD
	if pass.WantsStatus() { // what the handler sets, for a settle (settle.go)
		sent = &sentMD{}
		ss = &recordingStream{ServerStream: ss, sent: sent}
	}
	err = handler(srv, ss)
	if pass.WantsStatus() {
		settle(ctx, info.FullMethod, pass, err, sent, ss.SetTrailer)
	}
	return err
}

// settle settles a call's refund or cost (read from sent, the metadata its
// handler set) once its handler returned with err, and finishes it. gRPC
// sends the header metadata before the status is known (with the first
// response message, or when the handler sends it), so the header tells the
// quota before the settle; a call the settle changed gets the rate-limit
// fields after it in its trailer, which goes out with the status.
func settle(ctx context.Context, method string, pass httplimit.Pass, err error, sent *sentMD, setTrailer func(metadata.MD)) {
	code := HTTPStatus(status.Code(err))
	c := newCall(ctx, method)
	pass.Settle(code, settleWriter{c, sent})
	if md := c.headerMD(); md != nil {
		setTrailer(md)
	}
	c.release()
	pass.Finish(code)
}

// decide runs the handler on the call of ctx to method, hands what the
// policy set to send (which sends the fields), and returns the Pass of a call
// let through, or the status error of one that was not.
func (i *Interceptor) decide(ctx context.Context, method string, send func(*call)) (httplimit.Pass, error) {
	c := newCall(ctx, method)
	pass, ok := i.h.Handle(ctx, c, c)
	send(c)
	var err error
	switch {
	case ok:
	case c.status != 0 || c.decided && !c.decision.Allowed:
		err = c.answer() // a denied handler that wrote no status is still a denial
	default:
		err = gone(ctx)
	}
	c.release()
	return pass, err
}

// Limit decides the call of ctx, as the interceptors do, for
// go-grpc-middleware v2's ratelimit interceptors: an *Interceptor is a
// ratelimit.Limiter, for a server already wired to them.
//
//	ratelimit.UnaryServerInterceptor(grpcmw.PerIP("100/m"))
//
// The method is grpc.Method(ctx), and the rate-limit fields are set with
// grpc.SetHeader(ctx, ...). Limit returns nil when the call may go on, else
// an error whose message says why and which carries the status the
// interceptors would return (its GRPCStatus, with its details); the
// ratelimit interceptors answer ResourceExhausted whatever it is, with the
// message in their own text. Through Limit nothing learns how the call
// ended, so a policy's refunds (httplimit.WithRefund, count: failures) never
// happen, WithDecisionInContext reaches no handler, and streams are decided
// when they open only: use the interceptors for those.
func (i *Interceptor) Limit(ctx context.Context) error {
	method, _ := grpc.Method(ctx)
	_, err := i.decide(ctx, method, func(c *call) {
		if md := c.headerMD(); md != nil {
			_ = grpc.SetHeader(ctx, md)
		}
	})
	if err != nil {
		return limitError{status.Convert(err)}
	}
	return nil
}

// limitError is Limit's error: the status's message as its text, and the
// status itself for grpc-go's status.FromError.
type limitError struct{ st *status.Status }

func (e limitError) Error() string              { return e.st.Message() }
func (e limitError) GRPCStatus() *status.Status { return e.st }
