package fiber3mw

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// PerIP returns a Fiber v3 handler that allows each client IP limit, such as
// "100/m" (see httplimit.MustPerIP for the defaults). It panics on a
// malformed limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) fiber.Handler {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns a Fiber v3 handler applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts. The key is the client IP
// (the connection's peer address, not Fiber's c.IP() and its ProxyHeader)
// unless httplimit.WithKey says otherwise. It returns an error wrapping
// core.ErrInvalidOption for a nil limiter or an invalid option.
//
// The route pattern (for keyfuncs.Route) is c.Route().Path, which is the
// handler's own route: register the handler on each route
// (app.Get("/users/:id", mw, handler)), not with app.Use, when keys are per
// route. On the route, the view also tells a rules document the route Fiber
// matched (keyfuncs.MatchedRouteRequest), so that the route's policy governs
// every path Fiber hands to it, "/users/.." included (Fiber routes on the
// path as sent; the rules resolve the dot segment); in app.Use, which runs
// before Fiber has picked the route, it cannot. The store is called with c.Context(), the context that middleware
// before it set with c.SetContext (Fiber v3's successor to v2's
// UserContext); with httplimit.WithDecisionInContext the middleware hands the
// handlers after it the derived context through c.SetContext, which
// DecisionFrom reads. A limiter on the system clock decides at the instant
// fasthttp stamped on the request when it read it (RequestCtx.Time), without
// reading the clock again. fasthttp does not report a client that hangs up,
// so while the middleware holds a leaky-bucket request it checks the
// connection every httplimit.HangUpCheckInterval, with a peek at the socket
// that neither waits nor consumes what the client sent (on Linux, macOS and
// the BSDs), and drops the request once its client closed it; the server's
// shutdown ends a hold too. Under TLS a client that closes with a
// close_notify alert first is not noticed, and its request waits its whole
// delay. Under httplimit.WithRefund the status is the response's once the
// handler returned or, when it returned an error, the one Fiber's default
// error handler gives it (a *fiber.Error's Code, else 500). fasthttp sends
// the headers once the handlers returned, so the refund, settled then, is
// told in the rate-limit headers of the response it refunds.
//
// On Fiber's own context (*fiber.DefaultCtx) the middleware adds no
// allocation to a request; an app built with fiber.NewWithCustomCtx pays one
// small allocation a request, the view of its custom context.
func New(lim *core.Limiter, opts ...httplimit.Option) (fiber.Handler, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("fiber3mw: %w", err)
	}
	return middleware(p), nil
}

// Middleware returns the middleware that runs h on every request: a
// *httplimit.Policy the app keeps to call its Reset or Peek (an operator
// unblocking a client under every tier), an *httplimit.Group, or a rule set
// (*rules.Set, module github.com/ratewarden/ratewarden/rules), whose policies
// are chosen per request and reloaded without a restart. New(lim, opts...) is
// Middleware of httplimit.New(lim, opts...). It returns an error wrapping
// core.ErrInvalidOption for a nil h.
func Middleware(h httplimit.Handler) (fiber.Handler, error) {
	if err := httplimit.CheckHandler(h); err != nil {
		return nil, fmt.Errorf("fiber3mw: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) fiber.Handler {
	return func(c fiber.Ctx) error {
		// Fiber's own context is a pointer, so its view converts to the
		// policy's interfaces without allocating; a custom context is an
		// interface value, whose view is boxed.
		if dc, ok := c.(*fiber.DefaultCtx); ok {
			return handle(p, request[*fiber.DefaultCtx]{dc})
		}
		return handle(p, request[fiber.Ctx]{c})
	}
}

// view is the request and its response writer, as the policy takes them.
type view interface {
	keyfuncs.Request
	httplimit.ResponseWriter
}

// handle runs the policy on the request v views, then the rest of the chain
// when the policy lets the request through.
func handle[C fiber.Ctx](p httplimit.Handler, v request[C]) error {
	c := v.c
	ctx := c.Context()
	var rw view = v // converted once: a custom context's view is boxed once
	pass, ok := p.Handle(ctx, rw, rw)
	if !ok {
		return nil
	}
	defer pass.Release() // the in-flight slot, however the handler ends
	if nctx := pass.Context(); nctx != ctx {
		c.SetContext(nctx)
	}
	err := c.Next()
	if pass.WantsStatus() {
		// fasthttp sends the headers once the handlers returned: the refund
		// settled now still rewrites them.
		code := status(c, err)
		pass.Settle(code, rw)
		pass.Finish(code)
	}
	return err
}

// status is the response status of a request whose handler returned err:
// the status the response holds, or, for an error, the one Fiber's default
// error handler gives it (a *fiber.Error's Code, else 500).
func status(c fiber.Ctx, err error) int {
	if err == nil {
		return c.Response().StatusCode()
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return fiber.StatusInternalServerError
}

// DecisionFrom returns, when the middleware was built with
// httplimit.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none (it reads
// c.Context()).
func DecisionFrom(c fiber.Ctx) (core.Decision, bool) {
	return httplimit.DecisionFromContext(c.Context())
}
