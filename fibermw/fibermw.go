package fibermw

import (
	"fmt"
	"net"
	"strings"
	"unsafe"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// request is core's view of a *fiber.Ctx: one pointer, so passing it as a
// core.HTTPRequest does not allocate. fasthttp reuses its buffers once the
// handler returns, so every string handed out is a copy (made only when
// asked for), except the route pattern, which the app owns.
type request struct{ c *fiber.Ctx }

// RemoteAddr is the peer's IP (without the port, which costs an allocation
// and which no key uses) or, for a connection that is not TCP, its address.
func (v request) RemoteAddr() string {
	addr := v.c.Context().RemoteAddr()
	if a, ok := addr.(*net.TCPAddr); ok {
		if ip4 := a.IP.To4(); ip4 != nil {
			return formatIPv4(ip4)
		}
		return a.IP.String()
	}
	return addr.String()
}

// formatIPv4 is net.IP.String for a 4-byte address: decimal octets without
// leading zeros, written digit by digit (strconv's general path was a tenth of
// the middleware's time).
func formatIPv4(ip net.IP) string {
	var buf [len("255.255.255.255")]byte
	n := 0
	for i, o := range ip[:4] {
		if i > 0 {
			buf[n] = '.'
			n++
		}
		switch {
		case o >= 100:
			buf[n], buf[n+1], buf[n+2] = '0'+o/100, '0'+o/10%10, '0'+o%10
			n += 3
		case o >= 10:
			buf[n], buf[n+1] = '0'+o/10, '0'+o%10
			n += 2
		default:
			buf[n] = '0' + o
			n++
		}
	}
	return string(buf[:n])
}

func (v request) Header(name string) string { return strings.Clone(v.c.Get(name)) }
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
func (v request) Method() string { return strings.Clone(v.c.Method()) }
func (v request) Path() string   { return strings.Clone(v.c.Path()) }
func (v request) Route() string  { return v.c.Route().Path }

// New returns a Fiber (v2) handler applying lim to every request: the key is
// the client IP (the connection's peer address, not Fiber's c.IP() and its
// ProxyHeader; see package keyfuncs for proxies, API keys and JWTs) unless
// core.WithKeyFunc says otherwise, and the behaviour is core.HTTPPolicy's. It
// returns an error wrapping core.ErrInvalidOption for a nil limiter or an
// invalid option.
//
// The route pattern (for keyfuncs.Route) is c.Route().Path, which is the
// handler's own route: register the handler on each route
// (app.Get("/users/:id", mw, handler)), not with app.Use, when keys are per
// route. The store is called with c.UserContext(). fasthttp does not report a
// client that hangs up, so a held leaky-bucket request waits its whole delay
// (or until the server shuts down).
func New(lim *core.Limiter, opts ...core.HTTPOption) (fiber.Handler, error) {
	p, err := keyfuncs.Policy(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("fibermw: %w", err)
	}
	inContext := p.DecisionInContext()
	return func(c *fiber.Ctx) error {
		uctx := c.UserContext()
		o := p.Decide(uctx, request{c})
		h := &c.Response().Header
		for i := range o.NumHeaders() {
			// The names are canonical and the values are figures and checked
			// limit names, without line breaks: what c.Set would normalise is
			// already normal. SetCanonical copies both.
			name, values := o.Header(i)
			h.SetCanonical(bytesOf(name), bytesOf(values[0]))
		}
		if o.Action == core.HTTPRespond {
			resp := o.Response
			p.Release(o)
			if resp.ContentType != "" {
				c.Set(fiber.HeaderContentType, resp.ContentType)
			}
			return c.Status(resp.Status).Send(resp.Body)
		}
		if !o.Wait(c.Context()) {
			p.Release(o)
			return nil // the server is shutting down
		}
		if o.Decided && inContext {
			c.SetUserContext(o.Context(uctx))
		} else {
			p.Release(o)
		}
		return c.Next()
	}, nil
}

// bytesOf returns s's bytes without copying them; they must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// DecisionFrom returns, when the middleware was built with
// core.WithDecisionInContext, the decision it made for the request, as
// seen by the handlers after it; false when there is none (see
// core.DecisionFromContext, which reads c.UserContext()).
func DecisionFrom(c *fiber.Ctx) (core.Decision, bool) {
	return core.DecisionFromContext(c.UserContext())
}
