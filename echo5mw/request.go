package echo5mw

import (
	"context"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is the keyfuncs.Request view of a *echo.Context. Echo v5's Context
// is a struct handed over by pointer, so the view is one pointer and passing
// it as an interface allocates nothing: no pool is needed (echomw pools its
// views because Echo v4's Context is an interface, two words). The policy
// keeps no view after Handle returns.
type request struct{ c *echo.Context }

func (v request) RemoteAddr() string                { return v.c.Request().RemoteAddr }
func (v request) Header(name string) string         { return v.c.Request().Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.c.Request().Header.Values(name) }
func (v request) Method() string                    { return v.c.Request().Method }
func (v request) Path() string                      { return v.c.Request().URL.Path }
func (v request) Route() string                     { return v.c.Path() }
func (v request) Host() string                      { return v.c.Request().Host }
func (v request) EscapedPath() string               { return v.c.Request().URL.EscapedPath() }

// MatchedRoute is the route Echo's router matched
// (keyfuncs.MatchedRouteRequest), as registered: c.Path(), but "" on a 405,
// where Echo v5 leaves in c.Path() the route whose other methods it lists
// (it marks that case with echo.ContextKeyHeaderAllow); "" on a 404 too.
// Rules govern by it every path Echo routes to a handler: Echo gives a
// route's last parameter the rest of the path ("/users/7/x" reaches
// "/users/:id").
func (v request) MatchedRoute() string {
	if v.c.Get(echo.ContextKeyHeaderAllow) != nil {
		return ""
	}
	return v.c.Path()
}

// Context returns the request's context as seen from Echo: Value finds what
// c.Set stored first, then what c.Request().Context() holds (see
// requestContext).
func (v request) Context() context.Context { return requestContext(v) }

// ClientIP is Echo's c.RealIP() (keyfuncs.ClientIPResolver), for
// keyfuncs.FrameworkIP: the Echo.IPExtractor's answer, or without one the
// peer's address (Echo v5 reads no forwarding header unless told to).
func (v request) ClientIP() string { return v.c.RealIP() }

// requestContext is the context.Context of a *echo.Context: Value(key)
// returns c.Get(key) for a string key when it is not nil, else
// c.Request().Context().Value(key); Deadline, Done and Err are
// c.Request().Context()'s. One pointer, so it converts to a context.Context
// without allocating.
type requestContext struct{ c *echo.Context }

func (x requestContext) Deadline() (time.Time, bool) { return x.c.Request().Context().Deadline() }
func (x requestContext) Done() <-chan struct{}       { return x.c.Request().Context().Done() }
func (x requestContext) Err() error                  { return x.c.Request().Context().Err() }

func (x requestContext) Value(key any) any {
	if k, ok := key.(string); ok {
		if v := x.c.Get(k); v != nil {
			return v
		}
	}
	return x.c.Request().Context().Value(key)
}

// Native returns the *echo.Context behind a keyfuncs.Request that this
// package's middleware made, for key functions, skips, costs and responders
// that need more than the neutral view (c.Get, c.Param, c.RealIP, c.JSON);
// false for any other Request. Authentication middleware that runs before
// the limiter stores a user with c.Set("user", id), which
// keyfuncs.ContextValue("user") reads. The *echo.Context is Echo's, pooled and
// reused after the request: do not keep it.
func Native(r keyfuncs.Request) (*echo.Context, bool) {
	v, ok := r.(request)
	return v.c, ok && v.c != nil
}
