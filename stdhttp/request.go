package stdhttp

import (
	"context"
	"net/http"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is the keyfuncs.Request view of an *http.Request: one pointer, so
// passing it as an interface does not allocate. Its Context is the request's
// own. It does not implement keyfuncs.ClientIPResolver: net/http resolves no
// client IP of its own (use keyfuncs.IP).
type request struct{ r *http.Request }

func (v request) RemoteAddr() string                { return v.r.RemoteAddr }
func (v request) Header(name string) string         { return v.r.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.r.Header.Values(name) }
func (v request) Method() string                    { return v.r.Method }
func (v request) Path() string                      { return v.r.URL.Path }
func (v request) Route() string                     { return v.r.Pattern }
func (v request) Context() context.Context          { return v.r.Context() }
func (v request) Host() string                      { return v.r.Host }
func (v request) EscapedPath() string               { return v.r.URL.EscapedPath() }

// View returns r as the keyfuncs.Request the middleware hands to key
// functions: to test a key function, or to call one outside the middleware.
func View(r *http.Request) keyfuncs.Request { return request{r} }

// Native returns the *http.Request behind a keyfuncs.Request that this
// package's middleware (or View) made, for key functions, skips, costs and
// responders that need more than the neutral view; false for any other
// Request. Its Context is the one keyfuncs.ContextValue reads: authentication
// middleware that runs before the limiter stores a user with
// r.WithContext(context.WithValue(r.Context(), userKey{}, id)).
func Native(r keyfuncs.Request) (*http.Request, bool) {
	v, ok := r.(request)
	return v.r, ok && v.r != nil
}
