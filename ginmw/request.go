package ginmw

import (
	"context"
	"reflect"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is the keyfuncs.Request view of a *gin.Context: one pointer, so
// passing it as an interface does not allocate.
type request struct{ c *gin.Context }

func (v request) RemoteAddr() string                { return v.c.Request.RemoteAddr }
func (v request) Header(name string) string         { return v.c.Request.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.c.Request.Header.Values(name) }
func (v request) Method() string                    { return v.c.Request.Method }
func (v request) Path() string                      { return v.c.Request.URL.Path }
func (v request) Route() string                     { return v.c.FullPath() }
func (v request) Host() string                      { return v.c.Request.Host }
func (v request) EscapedPath() string               { return v.c.Request.URL.EscapedPath() }

// MatchedRoute is the route Gin's router matched
// (keyfuncs.MatchedRouteRequest), as registered: c.FullPath(), "" on a 404
// and a 405. Rules govern by it every path Gin routes to a handler: Gin
// routes "/users/.." and "/users/%2E%2E" to "/users/:id", where the rules
// resolve the dot segment.
func (v request) MatchedRoute() string { return v.c.FullPath() }

// Context returns the request's context as seen from Gin: Value finds what
// c.Set stored first, then what c.Request.Context() holds (see
// requestContext).
func (v request) Context() context.Context { return requestContext(v) }

// ClientIP is Gin's c.ClientIP() (keyfuncs.ClientIPResolver), for
// keyfuncs.FrameworkIP.
func (v request) ClientIP() string { return v.c.ClientIP() }

// requestContext is the context.Context of a *gin.Context that does not
// depend on Engine.ContextWithFallback: Value(key) returns what c.Set(key, v)
// stored, else c.Request.Context().Value(key) (gin.ContextKey gives c itself
// and gin.ContextRequestKey c.Request, as in Gin's own Value); Deadline, Done
// and Err are c.Request.Context()'s. One pointer, so it converts to a
// context.Context without allocating.
type requestContext struct{ c *gin.Context }

func (x requestContext) Deadline() (time.Time, bool) { return x.c.Request.Context().Deadline() }
func (x requestContext) Done() <-chan struct{}       { return x.c.Request.Context().Done() }
func (x requestContext) Err() error                  { return x.c.Request.Context().Err() }

func (x requestContext) Value(key any) any {
	switch key {
	case gin.ContextKey:
		return x.c
	case gin.ContextRequestKey:
		return x.c.Request
	}
	if hashable(key) {
		if v, ok := x.c.Get(key); ok {
			return v
		}
	}
	return x.c.Request.Context().Value(key)
}

// hashable reports whether key can index c.Keys (a map) without panicking.
func hashable(key any) bool {
	if _, ok := key.(string); ok {
		return true
	}
	return key != nil && reflect.ValueOf(key).Comparable()
}

// Native returns the *gin.Context behind a keyfuncs.Request that this
// package's middleware made, for key functions, skips, costs and responders
// that need more than the neutral view (c.Get, c.Param, c.ClientIP, c.JSON);
// false for any other Request. Authentication middleware that runs before
// the limiter stores a user with c.Set("user", id), which
// keyfuncs.ContextValue("user") reads. The *gin.Context is Gin's, pooled and
// reused after the request: do not keep it.
func Native(r keyfuncs.Request) (*gin.Context, bool) {
	v, ok := r.(request)
	return v.c, ok && v.c != nil
}
