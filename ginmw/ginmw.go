package ginmw

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PerIP returns Gin middleware that allows each client IP limit, such as
// "100/m" (see httplimit.MustPerIP for the defaults). It panics on a
// malformed limit, like regexp.MustCompile; use New for everything else.
func PerIP(limit string) gin.HandlerFunc {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns Gin middleware applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts. The key is the client IP
// (the peer address, not Gin's ClientIP) unless httplimit.WithKey says
// otherwise; the route pattern (for keyfuncs.Route) is FullPath. It returns
// an error wrapping core.ErrInvalidOption for a nil limiter or an invalid
// option. Under httplimit.WithRefund, and only then, the handlers after the
// middleware get a c.Writer that settles the refund for c.Writer.Status()
// as the headers go out (or once they returned, when they wrote nothing),
// so that a refunded response's rate-limit headers tell the quota after the
// refund.
func New(lim *core.Limiter, opts ...httplimit.Option) (gin.HandlerFunc, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("ginmw: %w", err)
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
func Middleware(h httplimit.Handler) (gin.HandlerFunc, error) {
	if err := httplimit.CheckHandler(h); err != nil {
		return nil, fmt.Errorf("ginmw: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		pass, ok := p.Handle(ctx, request{c}, c.Writer)
		if !ok {
			c.Abort()
			return
		}
		defer pass.Release() // the in-flight slot, however the handler ends
		if nctx := pass.Context(); nctx != ctx {
			c.Request = c.Request.WithContext(nctx)
		}
		if pass.WantsStatus() {
			serveRefunding(c, pass)
			return
		}
		c.Next()
	}
}

// DecisionFrom returns, when the middleware was built with
// httplimit.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none.
func DecisionFrom(c *gin.Context) (core.Decision, bool) {
	return httplimit.DecisionFromContext(c.Request.Context())
}
