package fibermw

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v2"
	"github.com/ratewarden/ratewarden/httplimit"
)

// request is the keyfuncs.Request view of a *fiber.Ctx and the
// httplimit.ResponseWriter of its response: one pointer, so passing it as
// either interface does not allocate. fasthttp reuses its buffers once the
// handler returns, so every string handed out is a copy (made only when asked
// for), except the route pattern, which the app owns, a standard method (a
// constant), and what PeekHeader returns to the policy, which keeps none of it.
type request struct{ c *fiber.Ctx }

// RemoteAddr is the peer's IP (without the port, which costs an allocation
// and which no key uses) or, for a connection that is not TCP, its address.
func (v request) RemoteAddr() string { return httplimit.PeerAddr(v.c.Context().RemoteAddr()) }

// PeerIP is the peer's IP address (keyfuncs.PeerIPRequest), which
// keyfuncs.IP reads instead of RemoteAddr's text: fasthttp reports the peer
// as a *net.TCPAddr, an address already.
func (v request) PeerIP() (netip.Addr, bool) { return httplimit.PeerIP(v.c.Context().RemoteAddr()) }

func (v request) Header(name string) string { return strings.Clone(v.c.Get(name)) }

// PeekHeader is Header without the copy (httplimit.HeaderPeeker): the value
// lies in fasthttp's buffers, valid only during the request. It asks
// fasthttp directly, past c.Get's conversions (the policy reads Accept on
// every answer it writes, a denial among them).
func (v request) PeekHeader(name string) string {
	b := v.c.Request().Header.Peek(name)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (v request) HeaderValues(name string) []string {
	raw := v.c.Request().Header.PeekAll(name)
	if len(raw) == 0 {
		return nil
	}
	out := make([]string, len(raw))
	for i, b := range raw {
		out[i] = string(b)
	}
	return out
}

// Method is the request's method: one of net/http's constants for a
// standard method, which costs no copy, or a copy of another.
func (v request) Method() string {
	switch m := v.c.Method(); m {
	case "GET":
		return http.MethodGet
	case "HEAD":
		return http.MethodHead
	case "POST":
		return http.MethodPost
	case "PUT":
		return http.MethodPut
	case "PATCH":
		return http.MethodPatch
	case "DELETE":
		return http.MethodDelete
	case "OPTIONS":
		return http.MethodOptions
	default:
		return strings.Clone(m)
	}
}

func (v request) Path() string  { return strings.Clone(v.c.Path()) }
func (v request) Route() string { return v.c.Route().Path }

// Host is the Host header as sent (keyfuncs.HostRequest), copied.
func (v request) Host() string { return string(v.c.Request().Host()) }

// EscapedPath is the path as the client sent it, percent-encoded, before
// fasthttp decoded and normalised it (keyfuncs.EscapedPathRequest), copied.
func (v request) EscapedPath() string { return string(v.c.Request().URI().PathOriginal()) }

// Context returns the request's context as seen from Fiber: Value finds what
// c.Locals stored first, then what c.UserContext() holds (see
// requestContext).
func (v request) Context() context.Context { return requestContext(v) }

// ClientIP is Fiber's c.IP() (keyfuncs.ClientIPResolver), for
// keyfuncs.FrameworkIP, copied: it may lie in fasthttp's buffers.
func (v request) ClientIP() string { return strings.Clone(v.c.IP()) }

// HoldContext is what a held request waits on (httplimit.HoldContext):
// fasthttp's RequestCtx, which ends when the server shuts down.
func (v request) HoldContext() context.Context { return v.c.Context() }

// ClientHungUp reports whether the client closed its connection
// (httplimit.HangUpChecker), which fasthttp does not report while a handler
// runs: a held request asks it now and then, with a peek at the socket that
// neither waits nor consumes what the client sent.
func (v request) ClientHungUp() bool { return httplimit.ConnHungUp(v.c.Context().Conn()) }

// ArrivedAt is the instant fasthttp read the request (httplimit.Arrival).
func (v request) ArrivedAt() time.Time { return v.c.Context().Time() }

// SetHeaders sets the headers the policy wrote (httplimit.HeaderSetter). The
// names are canonical and the values are figures, checked limit names and
// content types, without line breaks: what c.Set would normalise is already
// normal. SetCanonical copies both; the Content-Type of an answer goes
// straight to its own field, past SetCanonical's search for special names.
func (v request) SetHeaders(h httplimit.Headers) {
	rh := &v.c.Response().Header
	for i := range h.Len() {
		name, value := h.At(i)
		if name == "Content-Type" {
			rh.SetContentType(value)
			continue
		}
		rh.SetCanonical(bytesOf(name), bytesOf(value))
	}
}

// WriteHeader sets the response status.
func (v request) WriteHeader(status int) { v.c.Status(status) }

// Write appends b to the response body.
func (v request) Write(b []byte) (int, error) { return v.c.Write(b) }

// WriteSharedBody makes body, which is never modified, the response body
// without copying it (httplimit.SharedBodyWriter), as Fiber's c.Send and
// c.JSON do with fasthttp's SetBodyRaw: the body of the policy's own answers
// costs no copy and no buffer from fasthttp's pool. As after c.Send, a
// handler that writes to the response after the middleware answered it
// (c.Write, fasthttp's AppendBody) replaces that body rather than adding to
// it.
func (v request) WriteSharedBody(body []byte) { v.c.Response().SetBodyRaw(body) }

// bytesOf returns s's bytes without copying them; they must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
