package rules

import (
	"strings"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// hoster is implemented by a request view that knows the request's host
// (net/http keeps it in Request.Host, not among the headers): hosts are
// matched against Host() when the view has it, else against the Host header.
type hoster interface {
	Host() string
}

// escapedPather is implemented by a request view that can give the path as
// the client sent it, percent-encoded (url.URL.EscapedPath): paths are
// matched against EscapedPath() when the view has it, else against Path().
// The encoded form tells an encoded "/" (%2F, part of a segment) from a
// separator, which a decoded path cannot.
type escapedPather interface {
	EscapedPath() string
}

// requestPath returns the path of r to normalise and match.
func requestPath(r keyfuncs.Request) string {
	if ep, ok := r.(escapedPather); ok {
		return ep.EscapedPath()
	}
	return r.Path()
}

// requestHost returns the host of r without its port (see hostOnly), from
// Host() when r has it, else from the Host header (peeked without a copy
// when r is an httplimit.HeaderPeeker).
func requestHost(r keyfuncs.Request, peek httplimit.HeaderPeeker) string {
	if h, ok := r.(hoster); ok {
		return hostOnly(h.Host())
	}
	if peek != nil {
		return hostOnly(peek.PeekHeader("Host"))
	}
	return hostOnly(r.Header("Host"))
}

// hostOnly returns the host h names, as hosts are compared: without a port
// ("api.example.com:8443"), without the brackets of an IPv6 address
// ("[::1]:80" is "::1"), and without the final dot of a fully qualified name
// ("api.example.com." is "api.example.com", the same host to DNS).
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if end := strings.IndexByte(h, ']'); end > 0 {
			return h[1:end]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		h = h[:i] // one colon: host:port (a bare IPv6 address has several)
	}
	return strings.TrimSuffix(h, ".")
}
