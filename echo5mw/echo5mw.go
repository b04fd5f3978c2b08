package echo5mw

import (
	"fmt"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PerIP returns Echo v5 middleware that allows each client IP limit, such as
// "100/m" (see httplimit.MustPerIP for the defaults). It panics on a
// malformed limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) echo.MiddlewareFunc {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns Echo v5 middleware applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts. The key is the client IP
// (the peer address, not Echo's RealIP) unless httplimit.WithKey says
// otherwise. The route pattern (for keyfuncs.Route) is c.Path(), set once
// Echo has routed: install it with Use, not Pre, when keys are per route
// (Echo runs Use middleware for requests no route takes too, with an empty
// c.Path()). It returns an error wrapping core.ErrInvalidOption for a nil
// limiter or an invalid option. Under httplimit.WithRefund the status is the
// one sent, read through echo.UnwrapResponse once the handler returned, or,
// when it returned an error before anything was sent, the one Echo's default
// error handler gives that error (its echo.HTTPStatusCoder's code, such as an
// *echo.HTTPError's Code or echo.ErrNotFound's 404, else 500). The refund
// is settled in a Before hook of the response, just before its headers are
// written, so that a refunded response's rate-limit headers tell the quota
// after the refund.
func New(lim *core.Limiter, opts ...httplimit.Option) (echo.MiddlewareFunc, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("echo5mw: %w", err)
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
func Middleware(h httplimit.Handler) (echo.MiddlewareFunc, error) {
	if err := httplimit.CheckHandler(h); err != nil {
		return nil, fmt.Errorf("echo5mw: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			r := c.Request()
			ctx := r.Context()
			pass, ok := p.Handle(ctx, request{c}, c.Response())
			if !ok {
				return nil
			}
			defer pass.Release() // the in-flight slot, however the handler ends
			if nctx := pass.Context(); nctx != ctx {
				c.SetRequest(r.WithContext(nctx))
			}
			if pass.WantsStatus() {
				return serveRefunding(c, next, pass)
			}
			return next(c)
		}
	}
}

// status is the response status of a request whose handler returned err:
// what it sent, read through echo.UnwrapResponse, or, when it returned an
// error before sending anything, the status Echo's default error handler
// gives that error: the code of the first echo.HTTPStatusCoder in its chain
// when not 0, else 500. echo.ResolveResponseStatus is that rule, Echo's own.
func status(c *echo.Context, err error) int {
	_, code := echo.ResolveResponseStatus(c.Response(), err)
	return code
}

// DecisionFrom returns, when the middleware was built with
// httplimit.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none.
func DecisionFrom(c *echo.Context) (core.Decision, bool) {
	return httplimit.DecisionFromContext(c.Request().Context())
}
