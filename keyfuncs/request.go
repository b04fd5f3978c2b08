package keyfuncs

import "errors"

// Request is the framework-neutral view of an HTTP request that key functions
// and the HTTP policy (package httplimit) read. Each adapter implements it
// over its framework's request, usually as a one-pointer struct so that
// passing it costs no allocation.
type Request interface {
	// RemoteAddr is the network peer's address, "ip:port" or a bare IP.
	RemoteAddr() string
	// Header returns the first value of the named header, "" when absent.
	Header(name string) string
	// HeaderValues returns every value of the named header, in order (a header
	// such as X-Forwarded-For may be sent on several lines). The caller must
	// not modify the slice.
	HeaderValues(name string) []string
	// Method is the request method.
	Method() string
	// Path is the request path, without the query.
	Path() string
	// Route is the matched route pattern (Gin's FullPath, Echo's Path, Fiber's
	// route path, net/http's Request.Pattern), "" when the router gives none.
	Route() string
}

// Func extracts the rate-limit key from a request: who the client is. An
// error (wrapping ErrKey) means no key could be found, and the request is
// answered by the key-error policy, never let through unlimited.
type Func func(r Request) (string, error)

// ErrKey reports that no key could be extracted from a request (no API key, a
// bad token): the HTTP policy answers such a request with its key-error
// response, never lets it through unlimited.
var ErrKey = errors.New("ratewarden: no key")
