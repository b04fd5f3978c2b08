package rules

import (
	"strings"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// requestPath returns the path of r to normalise and match: as the client
// sent it (keyfuncs.EscapedPathRequest) when r can tell, else r.Path().
func requestPath(r keyfuncs.Request) string {
	if ep, ok := r.(keyfuncs.EscapedPathRequest); ok {
		return ep.EscapedPath()
	}
	return r.Path()
}

// requestHost returns the host of r without its port (see hostOnly), from
// keyfuncs.HostRequest when r implements it, else from the Host header
// (peeked without a copy when r is an httplimit.HeaderPeeker).
func requestHost(r keyfuncs.Request, peek httplimit.HeaderPeeker) string {
	if h, ok := r.(keyfuncs.HostRequest); ok {
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
