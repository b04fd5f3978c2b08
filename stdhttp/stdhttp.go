package stdhttp

import (
	"fmt"
	"net/http"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PerIP returns middleware that allows each client IP limit, such as "100/m"
// (see httplimit.MustPerIP for the defaults). It panics on a malformed limit,
// like regexp.MustCompile; use New for everything else.
func PerIP(limit string) func(http.Handler) http.Handler {
	return middleware(httplimit.MustPerIP(limit))
}

// New returns net/http middleware applying lim to every request, with the
// behaviour of httplimit.Policy configured by opts (the key is the client IP
// unless httplimit.WithKey says otherwise). It returns an error wrapping
// core.ErrInvalidOption for a nil limiter or an invalid option.
//
// The route pattern (for keyfuncs.Route) is http.Request.Pattern, which the
// ServeMux sets before calling the handler it matched: wrap the handlers you
// register, not the mux, when keys are per route.
//
// Under httplimit.WithRefund, and only then, the next handler gets a
// ResponseWriter that records the status it sends (200 when it sends none)
// and settles the refund as the status goes out, before the headers, so that
// a refunded response's rate-limit headers tell the quota after the refund;
// it passes Flush and Hijack through, and Unwrap gives the server's writer,
// for http.ResponseController.
func New(lim *core.Limiter, opts ...httplimit.Option) (func(http.Handler) http.Handler, error) {
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("stdhttp: %w", err)
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
func Middleware(h httplimit.Handler) (func(http.Handler) http.Handler, error) {
	if err := httplimit.CheckHandler(h); err != nil {
		return nil, fmt.Errorf("stdhttp: %w", err)
	}
	return middleware(h), nil
}

func middleware(p httplimit.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			pass, ok := p.Handle(ctx, request{r}, w)
			if !ok {
				return
			}
			defer pass.Release() // the in-flight slot, however the handler ends
			if nctx := pass.Context(); nctx != ctx {
				r = r.WithContext(nctx)
			}
			if !pass.WantsStatus() {
				next.ServeHTTP(w, r)
				return
			}
			sw := &statusWriter{ResponseWriter: w, pass: pass}
			next.ServeHTTP(sw, r)
			sw.finish()
		})
	}
}

// DecisionFrom returns, when the middleware was built with
// httplimit.WithDecisionInContext, the decision it made for r, as seen by the
// handlers after it; false when there is none.
func DecisionFrom(r *http.Request) (core.Decision, bool) {
	return httplimit.DecisionFromContext(r.Context())
}
