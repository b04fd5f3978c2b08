package keyfuncs

import (
	"fmt"
	"net/netip"
	"net/textproto"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Names of the forwarding headers IP can honour, for WithHeaders.
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

// IPOption configures IP.
type IPOption func(*ipConfig) error

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
	v4Bits     int
	v6Bits     int
	headers    []ipHeader
	headersSet bool
}

// WithTrustedProxies names the proxies whose forwarding headers are believed:
// CIDR prefixes ("10.0.0.0/8", "2001:db8::/32") or bare addresses
// ("192.0.2.10", which means a /32). Forwarding headers are read only when the
// peer address is inside one of them, and X-Forwarded-For and Forwarded are
// walked from the right past every hop inside them. The option may be given
// several times; the lists add up, and no argument adds nothing. An empty
// string, a zone, or anything that does not parse is an error. IPv4 peers
// (IPv4-mapped ones included) match IPv4 prefixes only: "::/0" does not trust
// them; "::ffff:10.0.0.0/104" is read as "10.0.0.0/8".
func WithTrustedProxies(cidrs ...string) IPOption {
	return func(c *ipConfig) error {
		for _, s := range cidrs {
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
		return netip.Prefix{}, fmt.Errorf("%w: keyfuncs.WithTrustedProxies: %q is not an IP address or CIDR prefix", core.ErrInvalidOption, s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// WithIPv6Prefix groups IPv6 clients by their first bits bits (1 to 128): the
// default is 64, because a single subscriber is normally given a whole /64 and
// can rotate through its 2^64 addresses at will. 128 keys each address on its
// own.
func WithIPv6Prefix(bits int) IPOption {
	return func(c *ipConfig) error {
		if bits < 1 || bits > 128 {
			return fmt.Errorf("%w: keyfuncs.WithIPv6Prefix: %d bits is outside 1..128", core.ErrInvalidOption, bits)
		}
		c.v6Bits = bits
		return nil
	}
}

// WithIPv4Prefix groups IPv4 clients by their first bits bits (1 to 32); the
// default, 32, keys each address on its own.
func WithIPv4Prefix(bits int) IPOption {
	return func(c *ipConfig) error {
		if bits < 1 || bits > 32 {
			return fmt.Errorf("%w: keyfuncs.WithIPv4Prefix: %d bits is outside 1..32", core.ErrInvalidOption, bits)
		}
		c.v4Bits = bits
		return nil
	}
}

// WithHeaders names which forwarding headers are honoured from a trusted peer,
// and in which order: the first one present that yields an address wins. The
// names are HeaderXForwardedFor, HeaderForwarded and HeaderXRealIP (case does
// not matter); each at most once, at least one. The default is all three, in
// that order. Name only the headers your proxies set or overwrite: a header
// that a proxy passes through untouched is whatever the client wrote. Without
// WithTrustedProxies no header is read, whatever WithHeaders says.
func WithHeaders(names ...string) IPOption {
	return func(c *ipConfig) error {
		if len(names) == 0 {
			return fmt.Errorf("%w: keyfuncs.WithHeaders: no header named (leave out WithTrustedProxies to use only the peer address)", core.ErrInvalidOption)
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
				return fmt.Errorf("%w: keyfuncs.WithHeaders: %q is not one of X-Forwarded-For, Forwarded, X-Real-IP", core.ErrInvalidOption, n)
			}
			for _, prev := range hs {
				if prev.kind == h.kind {
					return fmt.Errorf("%w: keyfuncs.WithHeaders: %q named twice", core.ErrInvalidOption, n)
				}
			}
			hs = append(hs, h)
		}
		c.headers = hs
		c.headersSet = true
		return nil
	}
}

var errPeer = fmt.Errorf("%w: the peer address is not an IP address", core.ErrKey)

// IP returns a key function that keys a request by its client's IP address.
//
// By default the client is the network peer (HTTPRequest.RemoteAddr, as
// "ip:port", "[ipv6]:port" or a bare address), and no header is looked at.
// With WithTrustedProxies, and only when the peer is inside the trusted
// prefixes, the forwarding headers are read, in the order of WithHeaders
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
// IP address is a key error wrapping core.ErrKey.
//
// The constructor returns an error wrapping core.ErrInvalidOption for an
// invalid option. The key function is safe for concurrent use and does not
// allocate when the key is the client address exactly as it was written.
func IP(opts ...IPOption) (core.KeyFunc, error) {
	c := ipConfig{v4Bits: 32, v6Bits: 64}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: keyfuncs.IP: nil option", core.ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if !c.headersSet {
		c.headers = []ipHeader{
			{HeaderXForwardedFor, kindXFF},
			{HeaderForwarded, kindForwarded},
			{HeaderXRealIP, kindXRealIP},
		}
	}
	if len(c.trusted) == 0 {
		c.headers = nil
	}
	return c.key, nil
}

func (c *ipConfig) key(r core.HTTPRequest) (string, error) {
	addr := r.RemoteAddr()
	// The common case first: an IPv4 peer written canonically.
	peer, peerText, canonical := canonicalIPv4(addr)
	if !canonical {
		var ok bool
		if peer, peerText, ok = parseHostPort(addr); !ok {
			return "", errPeer
		}
	}
	if len(c.headers) > 0 && c.isTrusted(peer) {
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
				return c.format(a, text), nil
			}
		}
	}
	if canonical && c.v4Bits == 32 {
		return peerText, nil // the address as written is the key
	}
	return c.format(peer, peerText), nil
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

// walk keeps the state of a right-to-left walk over a list of hops while the
// list is read left to right: after each entry, cand is the client the
// right-to-left walk would find if the list ended there.
type walk struct {
	cand     netip.Addr
	candText string
	has      bool
}

func (w *walk) step(c *ipConfig, a netip.Addr, text string, valid bool) {
	switch {
	case !valid:
		// The walk from the right stops here: what lies to the left no
		// longer matters, and the next trusted hop becomes the candidate.
		w.has = false
	case !c.isTrusted(a):
		w.cand, w.candText, w.has = a, text, true
	case !w.has:
		// Leftmost trusted hop of a run of trusted hops.
		w.cand, w.candText, w.has = a, text, true
	}
}

func (c *ipConfig) walkXFF(lines []string) (netip.Addr, string, bool) {
	var w walk
	for _, line := range lines {
		for len(line) > 0 {
			var entry string
			if i := strings.IndexByte(line, ','); i >= 0 {
				entry, line = line[:i], line[i+1:]
			} else {
				entry, line = line, ""
			}
			entry = trimOWS(entry)
			if entry == "" {
				continue // empty list elements are allowed and mean nothing
			}
			a, text, ok := parseHostPort(entry)
			w.step(c, a, text, ok)
		}
	}
	return w.cand, w.candText, w.has
}

func (c *ipConfig) walkForwarded(lines []string) (netip.Addr, string, bool) {
	var w walk
	for _, line := range lines {
		for len(line) > 0 {
			var forVal string
			var st elemStatus
			forVal, line, st = nextForwardedElement(line)
			switch st {
			case elemEmpty: // ", ," means nothing
			case elemBad:
				w.step(c, netip.Addr{}, "", false)
			default:
				a, text, valid := parseHostPort(forVal)
				w.step(c, a, text, valid)
			}
		}
	}
	return w.cand, w.candText, w.has
}

type elemStatus uint8

const (
	elemOK    elemStatus = iota // well formed, with exactly one for=
	elemEmpty                   // nothing between two commas
	elemBad                     // malformed, or without a for=
)

// nextForwardedElement reads one element of a Forwarded field value from s
// and returns its for= value (unquoted), the rest of s after the element's
// comma, and the element's status.
func nextForwardedElement(s string) (forVal, rest string, st elemStatus) {
	s = trimLeftOWS(s)
	if s == "" {
		return "", "", elemEmpty
	}
	if s[0] == ',' {
		return "", s[1:], elemEmpty
	}
	seenFor := false
	for {
		// name
		i := 0
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		if i == 0 || i == len(s) || s[i] != '=' {
			return "", skipElement(s), elemBad
		}
		name := s[:i]
		s = s[i+1:]
		// value: token or quoted-string
		var val string
		if s != "" && s[0] == '"' {
			j := 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					// No address contains a backslash: the value is
					// not an address, and the element is unusable.
					return "", skipElement(s[j:]), elemBad
				}
				j++
			}
			if j == len(s) {
				return "", "", elemBad // unterminated quote: the rest of the line is lost
			}
			val, s = s[1:j], s[j+1:]
		} else {
			j := 0
			for j < len(s) && isForwardedValueChar(s[j]) {
				j++
			}
			if j == 0 {
				return "", skipElement(s), elemBad
			}
			val, s = s[:j], s[j:]
		}
		if strings.EqualFold(name, "for") {
			if seenFor {
				return "", skipElement(s), elemBad
			}
			seenFor, forVal = true, val
		}
		s = trimLeftOWS(s)
		switch {
		case s == "" || s[0] == ',':
			if s != "" {
				s = s[1:]
			}
			if !seenFor {
				return "", s, elemBad
			}
			return forVal, s, elemOK
		case s[0] == ';':
			s = trimLeftOWS(s[1:])
		default:
			return "", skipElement(s), elemBad
		}
	}
}

// skipElement returns what follows the next comma of s, or "".
func skipElement(s string) string {
	if i := strings.IndexByte(s, ','); i >= 0 {
		return s[i+1:]
	}
	return ""
}

func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// isForwardedValueChar accepts token characters plus the ':', '[' and ']' that
// some proxies write unquoted, against RFC 7239.
func isForwardedValueChar(b byte) bool {
	return isTokenChar(b) || b == ':' || b == '[' || b == ']'
}

func realIP(lines []string) (netip.Addr, string, bool) {
	if len(lines) == 0 {
		return netip.Addr{}, "", false
	}
	v := trimOWS(lines[len(lines)-1])
	if v == "" || strings.IndexByte(v, ',') >= 0 {
		return netip.Addr{}, "", false
	}
	return parseHostPort(v)
}

// parseHostPort parses an address as proxies and servers write it: "ip",
// "ip:port", "[ipv6]", "[ipv6]:port", with an optional IPv6 zone, which is
// dropped. The port, when present, must be digits or an RFC 7239 obfuscated
// identifier. It returns the address (IPv4-mapped addresses unmapped) and the
// text it was parsed from.
func parseHostPort(s string) (netip.Addr, string, bool) {
	host := s
	switch {
	case s == "":
		return netip.Addr{}, "", false
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}, "", false
		}
		host = s[1:end]
		if rest := s[end+1:]; rest != "" && (rest[0] != ':' || !validPort(rest[1:])) {
			return netip.Addr{}, "", false
		}
		if strings.IndexByte(host, ':') < 0 {
			return netip.Addr{}, "", false // brackets are for IPv6 only
		}
	default:
		if i := strings.IndexByte(s, ':'); i >= 0 && strings.LastIndexByte(s, ':') == i {
			if !validPort(s[i+1:]) {
				return netip.Addr{}, "", false
			}
			host = s[:i]
		}
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		if strings.IndexByte(host, ':') < 0 {
			return netip.Addr{}, "", false // zones are for IPv6 only
		}
		host = host[:i]
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, "", false
	}
	return a.Unmap(), host, true
}

// canonicalIPv4 parses s as "a.b.c.d" or "a.b.c.d:port" with the address
// written as netip writes it (decimal octets without leading zeros), and
// returns the address and its text. It is parseHostPort's fast path: it
// answers false for anything else, which parseHostPort then reads.
func canonicalIPv4(s string) (netip.Addr, string, bool) {
	var ip [4]byte
	i := 0
	for k := range ip {
		if k > 0 {
			if i >= len(s) || s[i] != '.' {
				return netip.Addr{}, "", false
			}
			i++
		}
		start, v := i, 0
		for i < len(s) && i-start < 3 && '0' <= s[i] && s[i] <= '9' {
			v = v*10 + int(s[i]-'0')
			i++
		}
		if i == start || v > 255 || (s[start] == '0' && i-start > 1) {
			return netip.Addr{}, "", false
		}
		ip[k] = byte(v)
	}
	host := s[:i]
	if i < len(s) && (s[i] != ':' || !validPort(s[i+1:])) {
		return netip.Addr{}, "", false
	}
	return netip.AddrFrom4(ip), host, true
}

func validPort(p string) bool {
	if p == "" {
		return false
	}
	if p[0] == '_' { // RFC 7239 obfuscated port
		for i := 1; i < len(p); i++ {
			b := p[i]
			if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-') {
				return false
			}
		}
		return len(p) > 1
	}
	if len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

func trimOWS(s string) string {
	s = trimLeftOWS(s)
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func trimLeftOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

// canonicalHeader returns the canonical MIME form of a header name, the form
// adapters are handed.
func canonicalHeader(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }
