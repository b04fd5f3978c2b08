package echomw

import (
	"fmt"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is core's view of an echo.Context. echo.Context is an interface (two
// words), so views are pooled and passed by pointer: passing one as a
// core.HTTPRequest then allocates nothing. The policy keeps no view after
// Decide returns.
type request struct{ c echo.Context }

var views = sync.Pool{New: func() any { return new(request) }}

func (v *request) RemoteAddr() string                { return v.c.Request().RemoteAddr }
func (v *request) Header(name string) string         { return v.c.Request().Header.Get(name) }
func (v *request) HeaderValues(name string) []string { return v.c.Request().Header.Values(name) }
func (v *request) Method() string                    { return v.c.Request().Method }
func (v *request) Path() string                      { return v.c.Request().URL.Path }
func (v *request) Route() string                     { return v.c.Path() }

// New returns Echo middleware applying lim to every request: the key is the
// client IP (the peer address, not Echo's RealIP; see package keyfuncs for
// proxies, API keys and JWTs) unless core.WithKeyFunc says otherwise, and the
// behaviour is core.HTTPPolicy's. The route pattern (for keyfuncs.Route) is
// c.Path(), set once Echo has routed: install it with Use, not Pre, when keys
// are per route. It returns an error wrapping core.ErrInvalidOption for a nil
// limiter or an invalid option.
func New(lim *core.Limiter, opts ...core.HTTPOption) (echo.MiddlewareFunc, error) {
	p, err := keyfuncs.Policy(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("echomw: %w", err)
	}
	inContext := p.DecisionInContext()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			ctx := r.Context()
			v := views.Get().(*request)
			v.c = c
			o := p.Decide(ctx, v)
			v.c = nil
			views.Put(v)
			w := c.Response()
			h := w.Header()
			o.SetHeaders(h)
			if o.Action == core.HTTPRespond {
				resp := o.Response
				p.Release(o)
				if resp.ContentType != "" {
					h.Set(echo.HeaderContentType, resp.ContentType)
				}
				w.WriteHeader(resp.Status)
				_, err := w.Write(resp.Body)
				return err
			}
			if !o.Wait(ctx) {
				p.Release(o)
				return nil // the client left while the request was held
			}
			if o.Decided && inContext {
				c.SetRequest(r.WithContext(o.Context(ctx)))
			} else {
				p.Release(o) // nothing refers to it: the header map has its own values
			}
			return next(c)
		}
	}, nil
}

// DecisionFrom returns, when the middleware was built with
// core.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none (see
// core.DecisionFromContext).
func DecisionFrom(c echo.Context) (core.Decision, bool) {
	return core.DecisionFromContext(c.Request().Context())
}
