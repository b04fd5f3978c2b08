package fibermw

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
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
			return peers.ipv4(ip4)
		}
		return a.IP.String()
	}
	return addr.String()
}

// peerCache holds the text of recently seen IPv4 peers, so that a client's
// later requests reuse it instead of formatting and allocating it again. It is
// direct-mapped and lock-free: a slot holds one immutable entry, and a peer
// that maps to a busy slot replaces its entry. Its size is fixed (peerSlots
// entries of 24 bytes), whatever the number of clients.
type peerCache struct {
	slots [peerSlots]atomic.Pointer[peerEntry]
}

// peerSlots is the number of entries a peerCache holds (a power of two).
const peerSlots = 1024

// peerEntry is one cached peer: its address and its text, which lies in buf.
type peerEntry struct {
	ip  uint32
	n   uint8
	buf [len("255.255.255.255")]byte
}

// peers is the cache every middleware shares: a client's address is the same
// text whichever middleware formats it.
var peers peerCache

// ipv4 returns ip (4 bytes) as text, from the cache when it holds ip.
func (c *peerCache) ipv4(ip net.IP) string {
	a := binary.BigEndian.Uint32(ip)
	slot := &c.slots[peerSlot(a)]
	e := slot.Load()
	if e == nil || e.ip != a {
		e = &peerEntry{ip: a}
		e.n = uint8(len(appendIPv4(e.buf[:0], ip)))
		slot.Store(e)
	}
	// An entry is never written after it is stored: its text is immutable.
	return unsafe.String(&e.buf[0], int(e.n))
}

// peerSlotBits is log2(peerSlots).
const peerSlotBits = 10

// peerSlot is the slot of the IPv4 address a (big-endian): the top bits of a
// multiplicative hash, so neighbouring addresses spread out.
func peerSlot(a uint32) uint32 { return (a * 0x9E3779B1) >> (32 - peerSlotBits) }

// appendIPv4 appends ip (4 bytes) to buf as net.IP.String does: decimal
// octets without leading zeros, written digit by digit (strconv's general path
// was a tenth of the middleware's time). buf has room for 15 more bytes.
func appendIPv4(buf []byte, ip net.IP) []byte {
	n := len(buf)
	buf = buf[:n+len("255.255.255.255")]
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
	return buf[:n]
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
// route. The store is called with c.UserContext(). A limiter on the
// SystemClock decides at the instant fasthttp stamped on the request when it
// read it (RequestCtx.Time; see core.HTTPPolicy.DecideAt), without reading the
// clock again. fasthttp does not report a client that hangs up, so a held
// leaky-bucket request waits its whole delay (or until the server shuts down).
func New(lim *core.Limiter, opts ...core.HTTPOption) (fiber.Handler, error) {
	p, err := keyfuncs.Policy(lim, opts...)
	if err != nil {
		return nil, fmt.Errorf("fibermw: %w", err)
	}
	inContext := p.DecisionInContext()
	return func(c *fiber.Ctx) error {
		uctx := c.UserContext()
		// fasthttp read the time when the request arrived: decide then.
		o := p.DecideAt(uctx, request{c}, c.Context().Time())
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
		// A request held for the leaky bucket's queue stops waiting when the
		// server shuts down. One with no delay passes at once: fasthttp lets
		// the requests it is serving finish, and so does the middleware.
		if o.Decision.Delay > 0 && !o.Wait(c.Context()) {
			p.Release(o)
			return nil
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
