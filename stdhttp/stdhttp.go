package stdhttp

import (
	"fmt"
	"net/http"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is core's view of an *http.Request: one pointer, so passing it as a
// core.HTTPRequest does not allocate.
type request struct{ r *http.Request }

func (v request) RemoteAddr() string                { return v.r.RemoteAddr }
func (v request) Header(name string) string         { return v.r.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.r.Header.Values(name) }
func (v request) Method() string                    { return v.r.Method }
func (v request) Path() string                      { return v.r.URL.Path }
func (v request) Route() string                     { return v.r.Pattern }

// New returns net/http middleware applying lim to every request: the key is
// the client IP (the peer address; see package keyfuncs for proxies, API keys
// and JWTs) unless core.WithKeyFunc says otherwise, and the behaviour is
// core.HTTPPolicy's. It returns an error wrapping core.ErrInvalidOption for a
// nil limiter or an invalid option.
//
// The route pattern (for keyfuncs.Route) is http.Request.Pattern, which the
// ServeMux sets before calling the handler it matched: wrap the handlers you
// register, not the mux, when keys are per route.
func New(lim *core.Limiter, opts ...core.HTTPOption) (func(http.Handler) http.Handler, error) {
	p, err := keyfuncs.Policy(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("stdhttp: %w", err)
	}
	inContext := p.DecisionInContext()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			o := p.Decide(ctx, request{r})
			h := w.Header()
			o.SetHeaders(h)
			if o.Action == core.HTTPRespond {
				resp := o.Response
				p.Release(o)
				if resp.ContentType != "" {
					h.Set("Content-Type", resp.ContentType)
				}
				w.WriteHeader(resp.Status)
				_, _ = w.Write(resp.Body)
				return
			}
			if !o.Wait(ctx) {
				p.Release(o)
				return // the client left while the request was held
			}
			if o.Decided && inContext {
				r = r.WithContext(o.Context(ctx))
			} else {
				p.Release(o) // nothing refers to it: the header map has its own values
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// DecisionFrom returns, when the middleware was built with
// core.WithDecisionInContext, the decision it made for r, as seen by the
// handlers after it; false when there is none (see core.DecisionFromContext).
func DecisionFrom(r *http.Request) (core.Decision, bool) {
	return core.DecisionFromContext(r.Context())
}
