package ginmw

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is core's view of a *gin.Context: one pointer, so passing it as a
// core.HTTPRequest does not allocate.
type request struct{ c *gin.Context }

func (v request) RemoteAddr() string                { return v.c.Request.RemoteAddr }
func (v request) Header(name string) string         { return v.c.Request.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.c.Request.Header.Values(name) }
func (v request) Method() string                    { return v.c.Request.Method }
func (v request) Path() string                      { return v.c.Request.URL.Path }
func (v request) Route() string                     { return v.c.FullPath() }

// New returns Gin middleware applying lim to every request: the key is the
// client IP (the peer address, not Gin's ClientIP; see package keyfuncs for
// proxies, API keys and JWTs) unless core.WithKeyFunc says otherwise, and the
// behaviour is core.HTTPPolicy's. The route pattern (for keyfuncs.Route) is
// FullPath. It returns an error wrapping core.ErrInvalidOption for a nil
// limiter or an invalid option.
func New(lim *core.Limiter, opts ...core.HTTPOption) (gin.HandlerFunc, error) {
	p, err := keyfuncs.Policy(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("ginmw: %w", err)
	}
	inContext := p.DecisionInContext()
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		o := p.Decide(ctx, request{c})
		h := c.Writer.Header()
		o.SetHeaders(h)
		if o.Action == core.HTTPRespond {
			resp := o.Response
			p.Release(o)
			if resp.ContentType != "" {
				h.Set("Content-Type", resp.ContentType)
			}
			c.Writer.WriteHeader(resp.Status)
			_, _ = c.Writer.Write(resp.Body)
			c.Abort()
			return
		}
		if !o.Wait(ctx) {
			p.Release(o)
			c.Abort() // the client left while the request was held
			return
		}
		if o.Decided && inContext {
			c.Request = c.Request.WithContext(o.Context(ctx))
		} else {
			p.Release(o) // nothing refers to it: the header map has its own values
		}
		c.Next()
	}, nil
}

// DecisionFrom returns, when the middleware was built with
// core.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none (see
// core.DecisionFromContext).
func DecisionFrom(c *gin.Context) (core.Decision, bool) {
	return core.DecisionFromContext(c.Request.Context())
}
