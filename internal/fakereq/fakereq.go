// Package fakereq is a keyfuncs.Request for the project's own tests: a
// request with a peer address, headers, a method, a path, a route and a
// context, and no server behind it.
package fakereq

import (
	"context"
	"net/textproto"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Request is a keyfuncs.Request built by hand. Header names are matched in
// their canonical form, as net/http does.
type Request struct {
	Remote       string
	Headers      map[string][]string
	MethodName   string
	PathName     string
	RoutePattern string
	// Ctx is what Context returns; nil means context.Background().
	Ctx context.Context
}

var _ keyfuncs.Request = (*Request)(nil)

// New returns a GET request for "/" from remote with the header pairs kv
// (name, value, name, value, ...).
func New(remote string, kv ...string) *Request {
	r := &Request{Remote: remote, Headers: map[string][]string{}, MethodName: "GET", PathName: "/"}
	for i := 0; i+1 < len(kv); i += 2 {
		k := textproto.CanonicalMIMEHeaderKey(kv[i])
		r.Headers[k] = append(r.Headers[k], kv[i+1])
	}
	return r
}

// RemoteAddr returns Remote.
func (r *Request) RemoteAddr() string { return r.Remote }

// Header returns the first value of the named header.
func (r *Request) Header(name string) string {
	if v := r.Headers[textproto.CanonicalMIMEHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// HeaderValues returns every value of the named header.
func (r *Request) HeaderValues(name string) []string {
	return r.Headers[textproto.CanonicalMIMEHeaderKey(name)]
}

// Method returns MethodName.
func (r *Request) Method() string { return r.MethodName }

// Path returns PathName.
func (r *Request) Path() string { return r.PathName }

// Route returns RoutePattern.
func (r *Request) Route() string { return r.RoutePattern }

// Context returns Ctx, or context.Background() when Ctx is nil.
func (r *Request) Context() context.Context {
	if r.Ctx == nil {
		return context.Background()
	}
	return r.Ctx
}
