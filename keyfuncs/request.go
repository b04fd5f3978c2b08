package keyfuncs

import (
	"context"
	"errors"
	"fmt"
)

// Request is the framework-neutral view of an HTTP request that key functions
// and the HTTP policy (package httplimit) read. Each adapter implements it
// over its framework's request, usually as a one-pointer struct so that
// passing it costs no allocation. A Request is valid only while the call it
// was handed to runs: keep what you read from it, not the Request.
//
// Each adapter also has a function Native that returns its framework's own
// request from a Request (stdhttp.Native gives the *http.Request,
// ginmw.Native the *gin.Context, echomw.Native the echo.Context,
// fibermw.Native the *fiber.Ctx), for key functions, skips, costs and
// responders that need more than this view.
type Request interface {
	// RemoteAddr is the network peer's address, "ip:port" or a bare IP; for
	// a peer that has no IP address, whatever the server reports ("@" or ""
	// for a unix-socket peer).
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
	// Context is the request's context, where authentication middleware
	// leaves what it learnt (see ContextValue): net/http's
	// Request.Context(); for Gin, Echo and Fiber a context whose Value also
	// returns what c.Set (Gin, Echo) or c.Locals (Fiber) stored, as each
	// adapter's documentation says.
	Context() context.Context
}

// ClientIPResolver is implemented by the Request of an adapter whose
// framework resolves the client's IP address itself, from its own proxy
// settings: Gin's c.ClientIP(), Echo's c.RealIP() (v4 and v5), Fiber's c.IP()
// (v2 and v3).
// FrameworkIP keys by it. net/http has no such resolution, and its Request
// does not implement it.
type ClientIPResolver interface {
	// ClientIP returns the client's IP address as the framework resolved
	// it, "" when it has none.
	ClientIP() string
}

// HostRequest is implemented by a Request view that knows the host the
// request was sent to (net/http keeps it in Request.Host, not among the
// headers): what rules match hosts against. Every adapter's view implements
// it; for another view, rules read the Host header.
type HostRequest interface {
	// Host returns the request's host, with its port when the client sent one.
	Host() string
}

// EscapedPathRequest is implemented by a Request view that can give the path
// as the client sent it, percent-encoded (url.URL.EscapedPath): rules match
// paths in that form, normalised, which tells an encoded "/" (%2F, part of a
// segment) from a separator. Every adapter's view implements it; for
// another view, rules match Path.
type EscapedPathRequest interface {
	// EscapedPath returns the request path, percent-encoded as sent, without
	// the query.
	EscapedPath() string
}

// Func extracts the rate-limit key from a request: who the client is. An
// error (wrapping ErrKey) means no key could be found, and the request is
// answered by the key-error policy, never let through unlimited.
type Func func(r Request) (string, error)

// ErrKey reports that no key could be extracted from a request (no API key, a
// bad token): the HTTP policy answers such a request with its key-error
// response, never lets it through unlimited.
var ErrKey = errors.New("ratewarden: no key")

// ErrPeerNotIP reports that the client's address is unknown because the
// network peer has no IP address: the server listens on a unix socket (the
// peer's address is then "@" or "") or on a custom listener, and no trusted
// proxy named the client. It wraps ErrKey. It is a fault of the server's
// configuration, not of the request: behind a proxy that sets
// X-Forwarded-For (nginx → unix socket → app), trust the socket with
// WithTrustedProxies("unix"); otherwise key by something other than the
// address.
var ErrPeerNotIP = fmt.Errorf("%w: the peer address is not an IP address", ErrKey)
