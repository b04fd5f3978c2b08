package fibermw

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PerIP returns a Fiber handler that allows each client IP limit, such as
// "100/m" (see httplimit.MustPerIP for the defaults). It panics on a
// malformed limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) fiber.Handler {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns a Fiber (v2) handler applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts. The key is the client IP
// (the connection's peer address, not Fiber's c.IP() and its ProxyHeader)
// unless httplimit.WithKey says otherwise. It returns an error wrapping
// core.ErrInvalidOption for a nil limiter or an invalid option.
//
// The route pattern (for keyfuncs.Route) is c.Route().Path, which is the
// handler's own route: register the handler on each route
// (app.Get("/users/:id", mw, handler)), not with app.Use, when keys are per
// route. The store is called with c.UserContext(), and a limiter on the
// system clock decides at the instant fasthttp stamped on the request when it
// read it (RequestCtx.Time), without reading the clock again. fasthttp does
// not report a client that hangs up, so while the middleware holds a
// leaky-bucket request it checks the connection every
// httplimit.HangUpCheckInterval, with a peek at the socket that neither waits
// nor consumes what the client sent (on Linux, macOS and the BSDs), and drops
// the request once its client closed it; the server's shutdown ends a hold
// too. Under TLS a client that closes with a close_notify alert first is not
// noticed, and its request waits its whole delay. Under httplimit.WithRefund the
// status is the response's once the handler returned or, when it returned an
// error, the one Fiber's default error handler gives it (a *fiber.Error's
// Code, else 500). fasthttp sends the headers once the handlers returned, so
// the refund, settled then, is told in the rate-limit headers of the
// response it refunds.
func New(lim *core.Limiter, opts ...httplimit.Option) (fiber.Handler, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("fibermw: %w", err)
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
		return nil, fmt.Errorf("fibermw: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		v := request{c}
		pass, ok := p.Handle(ctx, v, v)
		if !ok {
			return nil
		}
		defer pass.Release() // the in-flight slot, however the handler ends
		if nctx := pass.Context(); nctx != ctx {
			c.SetUserContext(nctx)
		}
		err := c.Next()
		if pass.WantsStatus() {
			// fasthttp sends the headers once the handlers returned: the
			// refund settled now still rewrites them.
			code := status(c, err)
			pass.Settle(code, v)
			pass.Finish(code)
		}
		return err
	}
}

// status is the response status of a request whose handler returned err:
// the status the response holds, or, for an error, the one Fiber's default
// error handler gives it (a *fiber.Error's Code, else 500).
func status(c *fiber.Ctx, err error) int {
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
// c.UserContext()).
func DecisionFrom(c *fiber.Ctx) (core.Decision, bool) {
	return httplimit.DecisionFromContext(c.UserContext())
}
