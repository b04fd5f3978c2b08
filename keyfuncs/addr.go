package keyfuncs

import (
	"net/netip"
	"net/textproto"
	"strings"
)

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
