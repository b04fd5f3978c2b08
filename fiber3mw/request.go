package fiber3mw

import (
	"context"
	"net/netip"
	"strings"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/httplimit"
)

// request is the keyfuncs.Request view of a fiber.Ctx and the
// httplimit.ResponseWriter of its response. On Fiber's own *fiber.DefaultCtx
// it is one pointer, so passing it as either interface does not allocate; on
// a custom context (C is fiber.Ctx) it is an interface value, boxed once a
// request. fasthttp reuses its buffers once the handler returns, so every
// string handed out is a copy (made only when asked for), except the route
// pattern and the method, which the app owns, and what PeekHeader returns to
// the policy, which keeps none of it.
type request[C fiber.Ctx] struct{ c C }

// RemoteAddr is the peer's IP (without the port, which costs an allocation
// and which no key uses) or, for a connection that is not TCP, its address.
func (v request[C]) RemoteAddr() string { return httplimit.PeerAddr(v.c.RequestCtx().RemoteAddr()) }

// PeerIP is the peer's IP address (keyfuncs.PeerIPRequest), which
// keyfuncs.IP reads instead of RemoteAddr's text: fasthttp reports the peer
// as a *net.TCPAddr, an address already.
func (v request[C]) PeerIP() (netip.Addr, bool) {
	return httplimit.PeerIP(v.c.RequestCtx().RemoteAddr())
}

func (v request[C]) Header(name string) string { return strings.Clone(v.c.Get(name)) }

// PeekHeader is Header without the copy (httplimit.HeaderPeeker): the value
// lies in fasthttp's buffers, valid only during the request. It asks
// fasthttp directly, past c.Get's conversions (the policy reads Accept on
// every answer it writes, a denial among them).
func (v request[C]) PeekHeader(name string) string {
	b := v.c.Request().Header.Peek(name)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (v request[C]) HeaderValues(name string) []string {
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

// Method is c.Method(), one of the app's fiber.Config.RequestMethods, which
// the app owns (Fiber answers any other method 501 before a handler runs):
// no copy.
func (v request[C]) Method() string { return v.c.Method() }

func (v request[C]) Path() string  { return strings.Clone(v.c.Path()) }
func (v request[C]) Route() string { return v.c.Route().Path }

// MatchedRoute is the route Fiber's router matched
// (keyfuncs.MatchedRouteRequest), as registered: c.Route().Path when the
// middleware runs on the route itself (app.Get("/users/:id", mw, handler)),
// "" when it runs in app.Use, which Fiber calls before it has picked the
// route. Rules govern by it every path Fiber routes to the route: Fiber v3
// routes on the path as sent, so "/users/.." and "/users/%2E%2E" reach
// "/users/:id", where the rules resolve the dot segment.
func (v request[C]) MatchedRoute() string {
	if !v.c.Matched() {
		return ""
	}
	if r := v.c.Route(); r.Method != useMethod {
		return r.Path
	}
	return ""
}

// useMethod is the Method of the routes app.Use and Group.Use register.
const useMethod = "USE"

// Host is the Host header as sent (keyfuncs.HostRequest), copied.
func (v request[C]) Host() string { return string(v.c.Request().Host()) }

// EscapedPath is the path as the client sent it, percent-encoded, before
// fasthttp decoded and normalised it (keyfuncs.EscapedPathRequest), copied.
func (v request[C]) EscapedPath() string { return string(v.c.Request().URI().PathOriginal()) }

// Context returns the request's context as seen from Fiber: Value finds what
// c.Locals stored first, then what c.Context() holds (see requestContext).
func (v request[C]) Context() context.Context { return requestContext[C](v) }

// ClientIP is Fiber's c.IP() (keyfuncs.ClientIPResolver), for
// keyfuncs.FrameworkIP, copied: it may lie in fasthttp's buffers. Fiber v3
// reads fiber.Config.ProxyHeader only with TrustProxy set and the peer
// allowed by TrustProxyConfig; otherwise c.IP() is the peer.
func (v request[C]) ClientIP() string { return strings.Clone(v.c.IP()) }

// HoldContext is what a held request waits on (httplimit.HoldContext):
// fasthttp's RequestCtx, which ends when the server shuts down.
func (v request[C]) HoldContext() context.Context { return v.c.RequestCtx() }

// ClientHungUp reports whether the client closed its connection
// (httplimit.HangUpChecker), which fasthttp does not report while a handler
// runs: a held request asks it now and then, with a peek at the socket that
// neither waits nor consumes what the client sent.
func (v request[C]) ClientHungUp() bool { return httplimit.ConnHungUp(v.c.RequestCtx().Conn()) }

// ArrivedAt is the instant fasthttp read the request (httplimit.Arrival).
func (v request[C]) ArrivedAt() time.Time { return v.c.RequestCtx().Time() }

// SetHeaders sets the headers the policy wrote (httplimit.HeaderSetter). The
// names are canonical and the values are figures, checked limit names and
// content types, without line breaks: what c.Set would normalise is already
// normal. SetCanonical copies both; the Content-Type of an answer goes
// straight to its own field, past SetCanonical's search for special names.
func (v request[C]) SetHeaders(h httplimit.Headers) {
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
func (v request[C]) WriteHeader(status int) { v.c.Status(status) }

// Write appends b to the response body.
func (v request[C]) Write(b []byte) (int, error) { return v.c.Write(b) }

// WriteSharedBody makes body, which is never modified, the response body
// without copying it (httplimit.SharedBodyWriter), as Fiber's c.Send and
// c.JSON do with fasthttp's SetBodyRaw: the body of the policy's own answers
// costs no copy and no buffer from fasthttp's pool. As after c.Send, a
// handler that writes to the response after the middleware answered it
// (c.Write, fasthttp's AppendBody) replaces that body rather than adding to
// it.
func (v request[C]) WriteSharedBody(body []byte) { v.c.Response().SetBodyRaw(body) }

// bytesOf returns s's bytes without copying them; they must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
