package stdhttp

import (
	"net/http"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is the keyfuncs.Request view of an *http.Request: one pointer, so
// passing it as an interface does not allocate.
type request struct{ r *http.Request }

func (v request) RemoteAddr() string                { return v.r.RemoteAddr }
func (v request) Header(name string) string         { return v.r.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.r.Header.Values(name) }
func (v request) Method() string                    { return v.r.Method }
func (v request) Path() string                      { return v.r.URL.Path }
func (v request) Route() string                     { return v.r.Pattern }

// View returns r as the keyfuncs.Request the middleware hands to key
// functions: to test a key function, or to call one outside the middleware.
func View(r *http.Request) keyfuncs.Request { return request{r} }
