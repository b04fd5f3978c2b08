package echomw

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PerIP returns Echo middleware that allows each client IP limit, such as
// "100/m" (see httplimit.MustPerIP for the defaults). It panics on a
// malformed limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) echo.MiddlewareFunc {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns Echo middleware applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts. The key is the client IP
// (the peer address, not Echo's RealIP) unless httplimit.WithKey says
// otherwise. The route pattern (for keyfuncs.Route) is c.Path(), set once
// Echo has routed: install it with Use, not Pre, when keys are per route. It
// returns an error wrapping core.ErrInvalidOption for a nil limiter or an
// invalid option. Under httplimit.WithRefund the status is the one the
// response sends or, when the handler returned an error before writing, the
// one Echo's default error handler gives it (an *echo.HTTPError's Code, else
// 500); the refund is settled in a Before hook of the response, just before
// its headers are written, so that a refunded response's rate-limit headers
// tell the quota after the refund.
func New(lim *core.Limiter, opts ...httplimit.Option) (echo.MiddlewareFunc, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("echomw: %w", err)
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
		return nil, fmt.Errorf("echomw: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			ctx := r.Context()
			v := views.Get().(*request)
			v.c = c
			pass, ok := p.Handle(ctx, v, c.Response())
			v.c = nil
			views.Put(v)
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
// what it sent, or, when it returned an error before sending anything, the
// status Echo's default error handler gives that error.
func status(c echo.Context, err error) int {
	if resp := c.Response(); resp.Committed || err == nil {
		return resp.Status
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return http.StatusInternalServerError
}

// DecisionFrom returns, when the middleware was built with
// httplimit.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none.
func DecisionFrom(c echo.Context) (core.Decision, bool) {
	return httplimit.DecisionFromContext(c.Request().Context())
}
