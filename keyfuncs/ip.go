package keyfuncs

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Names of the forwarding headers IP can honour, for
// WithForwardingHeaders.
const (
	// HeaderXForwardedFor is the de facto standard list of addresses, one
	// appended by each proxy.
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is the RFC 7239 Forwarded header; its for= parameters
	// are read.
	HeaderForwarded = "Forwarded"
	// HeaderXRealIP is the single client address set by nginx-style proxies.
	HeaderXRealIP = "X-Real-Ip"
)

type headerKind uint8

const (
	kindXFF headerKind = iota
	kindForwarded
	kindXRealIP
)

type ipHeader struct {
	name string // canonical MIME form
	kind headerKind
}

type ipConfig struct {
	trusted    []netip.Prefix
	trustUnix  bool // TrustUnixSocket was named
	v4Bits     int
	v6Bits     int
	headers    []ipHeader
	headersSet bool
}

// TrustUnixSocket is the WithTrustedProxies entry that trusts a unix-socket
// peer: a connection to a unix-socket listener, whose peer address net/http,
// Gin, Echo and Fiber report as "@" (an unnamed client socket, what nginx and
// most proxies use), "" (when the system names no peer) or the client
// socket's path when it is bound to one. Name it when the app listens on a
// unix socket behind a reverse proxy (nginx's
// "proxy_pass http://unix:/run/app.sock:"): only what can open the socket
// file can connect, so the proxy's forwarding headers can be believed. A peer
// address that is neither an IP address nor one of these forms stays
// untrusted.
const TrustUnixSocket = "unix"

// WithTrustedProxies names the proxies whose forwarding headers are believed:
// CIDR prefixes ("10.0.0.0/8", "2001:db8::/32"), bare addresses
// ("192.0.2.10", which means a /32), or TrustUnixSocket ("unix"), which names
// a peer that has no IP address, such as a unix-socket connection. Forwarding
// headers are read only when the peer address is inside one of them, and
// X-Forwarded-For and Forwarded are walked from the right past every hop
// inside them. The option may be given several times; the lists add up, and
// no argument adds nothing. An empty string, a zone, or anything that does not
// parse is an error. IPv4 peers (IPv4-mapped ones included) match IPv4
// prefixes only: "::/0" does not trust them; "::ffff:10.0.0.0/104" is read as
// "10.0.0.0/8".
func WithTrustedProxies(cidrs ...string) Option {
	return func(cfg *config) error {
		if cfg.ctor == "FrameworkIP" {
			return fmt.Errorf("%w: keyfuncs.FrameworkIP: WithTrustedProxies does not apply: FrameworkIP takes the framework's answer, so name the proxies to the framework (Gin's SetTrustedProxies, Echo's IPExtractor, Fiber's TrustedProxies)", core.ErrInvalidOption)
		}
		if err := cfg.appliesTo("WithTrustedProxies", "IP"); err != nil {
			return err
		}
		c := &cfg.ip
		for _, s := range cidrs {
			if s == TrustUnixSocket {
				c.trustUnix = true
				continue
			}
			p, err := parseTrusted(s)
			if err != nil {
				return err
			}
			c.trusted = append(c.trusted, p)
		}
		return nil
	}
}

func parseTrusted(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: keyfuncs.WithTrustedProxies: %q is not a CIDR prefix", core.ErrInvalidOption, s)
		}
		p = p.Masked()
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%w: keyfuncs.WithTrustedProxies: %q is not an IP address, CIDR prefix or %q", core.ErrInvalidOption, s, TrustUnixSocket)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// WithIPv6Prefix groups IPv6 clients by their first bits bits (1 to 128): the
// default is 64, because a single subscriber is normally given a whole /64 and
// can rotate through its 2^64 addresses at will. 128 keys each address on its
// own.
func WithIPv6Prefix(bits int) Option {
	return func(cfg *config) error {
		if err := cfg.appliesTo("WithIPv6Prefix", "IP", "FrameworkIP"); err != nil {
			return err
		}
		c := &cfg.ip
		if bits < 1 || bits > 128 {
			return fmt.Errorf("%w: keyfuncs.WithIPv6Prefix: %d bits is outside 1..128", core.ErrInvalidOption, bits)
		}
		c.v6Bits = bits
		return nil
	}
}

// WithIPv4Prefix groups IPv4 clients by their first bits bits (1 to 32); the
// default, 32, keys each address on its own.
func WithIPv4Prefix(bits int) Option {
	return func(cfg *config) error {
		if err := cfg.appliesTo("WithIPv4Prefix", "IP", "FrameworkIP"); err != nil {
			return err
		}
		c := &cfg.ip
		if bits < 1 || bits > 32 {
			return fmt.Errorf("%w: keyfuncs.WithIPv4Prefix: %d bits is outside 1..32", core.ErrInvalidOption, bits)
		}
		c.v4Bits = bits
		return nil
	}
}

// WithForwardingHeaders names which forwarding headers are honoured from a trusted peer,
// and in which order: the first one present that yields an address wins. The
// names are HeaderXForwardedFor, HeaderForwarded and HeaderXRealIP (case does
// not matter); each at most once, at least one. The default is all three, in
// that order. Name only the headers your proxies set or overwrite: a header
// that a proxy passes through untouched is whatever the client wrote. Without
// WithTrustedProxies no header is read, whatever WithForwardingHeaders says.
func WithForwardingHeaders(names ...string) Option {
	return func(cfg *config) error {
		if err := cfg.appliesTo("WithForwardingHeaders", "IP"); err != nil {
			return err
		}
		c := &cfg.ip
		if len(names) == 0 {
			return fmt.Errorf("%w: keyfuncs.WithForwardingHeaders: no header named (leave out WithTrustedProxies to use only the peer address)", core.ErrInvalidOption)
		}
		hs := make([]ipHeader, 0, len(names))
		for _, n := range names {
			var h ipHeader
			switch {
			case strings.EqualFold(n, HeaderXForwardedFor):
				h = ipHeader{HeaderXForwardedFor, kindXFF}
			case strings.EqualFold(n, HeaderForwarded):
				h = ipHeader{HeaderForwarded, kindForwarded}
			case strings.EqualFold(n, HeaderXRealIP):
				h = ipHeader{HeaderXRealIP, kindXRealIP}
			default:
				return fmt.Errorf("%w: keyfuncs.WithForwardingHeaders: %q is not one of X-Forwarded-For, Forwarded, X-Real-IP", core.ErrInvalidOption, n)
			}
			for _, prev := range hs {
				if prev.kind == h.kind {
					return fmt.Errorf("%w: keyfuncs.WithForwardingHeaders: %q named twice", core.ErrInvalidOption, n)
				}
			}
			hs = append(hs, h)
		}
		c.headers = hs
		c.headersSet = true
		return nil
	}
}

var (
	errPeerNotIP   = fmt.Errorf(`%w (a unix socket or a custom listener): behind a proxy that sets X-Forwarded-For, trust the socket with keyfuncs.WithTrustedProxies("unix"); otherwise key by something other than the address`, ErrPeerNotIP)
	errNoForwarded = fmt.Errorf("%w, and no honoured forwarding header names the client: make the proxy on the unix socket set X-Forwarded-For (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for)", ErrPeerNotIP)
)

// IP returns a key function that keys a request by its client's IP address.
//
// By default the client is the network peer (Request.RemoteAddr, as
// "ip:port", "[ipv6]:port" or a bare address, or the address a view that
// implements PeerIPRequest gives, which keys the same), and no header is
// looked at.
// With WithTrustedProxies, and only when the peer is inside the trusted
// prefixes, the forwarding headers are read, in the order of WithForwardingHeaders
// (default: X-Forwarded-For, then Forwarded, then X-Real-IP; the first that
// yields an address wins):
//
//   - X-Forwarded-For and Forwarded (for= parameters) are read as one list
//     over all their header lines, and walked from the right: trusted hops are
//     skipped and the first untrusted address is the client. If every hop is
//     trusted, the leftmost is the client. An entry that is not an address
//     ("unknown", an obfuscated identifier, garbage) ends the walk: the
//     trusted hop to its right is the client, or, when it is the rightmost
//     entry, the header yields nothing.
//   - X-Real-IP is a single address (the last line if it is sent several times).
//
// When no honoured header yields an address the peer is the client. Ports,
// brackets and IPv6 zones are dropped; IPv4-mapped IPv6 addresses are treated as
// IPv4. The key is the client address masked to WithIPv4Prefix bits (default 32)
// or WithIPv6Prefix bits (default 64) in canonical form: "203.0.113.7" for a
// whole address, "2001:db8:1:2::/64" for a prefix. A peer address that is not an
// IP address ("@" or "" for a unix-socket peer) is a key error wrapping
// ErrPeerNotIP (and so ErrKey), unless WithTrustedProxies names
// TrustUnixSocket and a forwarding header names the client.
//
// The constructor returns an error wrapping core.ErrInvalidOption for an
// invalid option. The key function is safe for concurrent use and does not
// allocate when the key is the client address exactly as it was written.
func IP(opts ...Option) (Func, error) {
	cfg := config{ctor: "IP", ip: ipConfig{v4Bits: 32, v6Bits: 64}}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	c := &cfg.ip
	if !c.headersSet {
		c.headers = []ipHeader{
			{HeaderXForwardedFor, kindXFF},
			{HeaderForwarded, kindForwarded},
			{HeaderXRealIP, kindXRealIP},
		}
	}
	if len(c.trusted) == 0 && !c.trustUnix {
		c.headers = nil
	}
	return c.key, nil
}

func (c *ipConfig) key(r Request) (string, error) {
	if pr, ok := r.(PeerIPRequest); ok {
		if peer, ok := pr.PeerIP(); ok {
			return c.peerKey(r, peer.Unmap().WithZone("")), nil
		}
	}
	addr := r.RemoteAddr()
	// The common case first: an IPv4 peer written canonically.
	peer, peerText, canonical := canonicalIPv4(addr)
	if !canonical {
		var ok bool
		if peer, peerText, ok = parseHostPort(addr); !ok {
			return c.nonIPPeerKey(r)
		}
	}
	if len(c.headers) > 0 && c.isTrusted(peer) {
		if k, ok := c.fromHeaders(r); ok {
			return k, nil
		}
	}
	if canonical && c.v4Bits == 32 {
		return peerText, nil // the address as written is the key
	}
	return c.format(peer, peerText), nil
}

// nonIPPeerKey is the key of a request whose peer has no IP address: the
// client named by the forwarding headers when such peers are trusted.
func (c *ipConfig) nonIPPeerKey(r Request) (string, error) {
	if !c.trustUnix || !isUnixPeer(r.RemoteAddr()) {
		return "", errPeerNotIP
	}
	if k, ok := c.fromHeaders(r); ok {
		return k, nil
	}
	return "", errNoForwarded
}

// isUnixPeer reports whether addr is how servers write a unix-socket peer:
// "", "@" (or "@name", an abstract socket) or a path.
func isUnixPeer(addr string) bool {
	return addr == "" || addr[0] == '@' || addr[0] == '/'
}

// fromHeaders returns the key of the client the honoured forwarding headers
// name, in their order; false when none does.
func (c *ipConfig) fromHeaders(r Request) (string, bool) {
	for _, h := range c.headers {
		var a netip.Addr
		var text string
		var ok bool
		switch h.kind {
		case kindXFF:
			a, text, ok = c.walkXFF(r.HeaderValues(h.name))
		case kindForwarded:
			a, text, ok = c.walkForwarded(r.HeaderValues(h.name))
		default:
			a, text, ok = realIP(r.HeaderValues(h.name))
		}
		if ok {
			return c.format(a, text), true
		}
	}
	return "", false
}

func (c *ipConfig) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// format returns the key of a: the address masked to the configured prefix.
// text is the address as it was written; when it is already canonical it is
// returned as is, which saves an allocation.
func (c *ipConfig) format(a netip.Addr, text string) string {
	bits := c.v6Bits
	if a.Is4() {
		bits = c.v4Bits
	}
	var buf [64]byte
	if bits == a.BitLen() {
		b := a.AppendTo(buf[:0])
		if string(b) == text {
			return text
		}
		return string(b)
	}
	p, _ := a.Prefix(bits) // bits is in range for a's family
	return string(p.AppendTo(buf[:0]))
}
