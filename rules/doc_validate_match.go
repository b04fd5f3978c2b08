package rules

import (
	"fmt"
	"strings"
)

// match checks a policy's match: patterns and prefixes by the matcher's own
// parser (parsePattern, checkPrefix), methods, hosts and header conditions.
func (v *validator) match(m *Match, at *path, pos Pos) {
	for i, s := range m.Paths {
		if _, err := parsePattern(s); err != nil {
			v.report(at.dot("paths").at(i), pos, nil, "%v", err)
		}
	}
	for i, s := range m.Prefixes {
		if err := checkPrefix(s); err != nil {
			v.report(at.dot("prefixes").at(i), pos, nil, "%v", err)
		}
	}
	for i, s := range m.Methods {
		if msg := methodProblem(s); msg != "" {
			v.report(at.dot("methods").at(i), pos, nil, "%s", msg)
		}
	}
	for i, s := range m.Hosts {
		if msg := hostProblem(s); msg != "" {
			v.report(at.dot("hosts").at(i), pos, nil, "%s", msg)
		}
	}
	for i, h := range m.Headers {
		hat := at.dot("headers").at(i)
		if msg := tokenProblem("header name", h.Name); msg != "" {
			v.report(hat.dot("name"), pos, nil, "%s", msg)
		}
		if h.Present && h.Value != "" {
			v.report(hat, pos, nil, "a header condition is present or equals a value, not both")
		}
	}
}

// key checks the parts of a key (or of what picks a tier).
func (v *validator) key(parts []KeyPart, at *path, pos Pos) {
	for i, p := range parts {
		pat := at
		if len(parts) > 1 {
			pat = at.at(i)
		}
		switch p.Kind {
		case KeyIP, KeyFrameworkIP, KeyRoute, KeyMethod:
			if p.Name != "" {
				v.report(pat, pos, nil, "this key part takes no name (got %s)", brief(p.Name))
			}
		case KeyHeader:
			if msg := tokenProblem("header name", p.Name); msg != "" {
				v.report(pat.dot("header"), pos, nil, "%s", msg)
			}
		case KeyJWTClaim, KeyContext:
			field := map[KeyKind]string{KeyJWTClaim: "jwt_claim", KeyContext: "context"}[p.Kind]
			switch {
			case p.Name == "":
				v.report(pat.dot(field), pos, nil, "the %s name is empty", field)
			case len(p.Name) > MaxKeyLength:
				v.report(pat.dot(field), pos, nil, "a %s name of %d bytes: the most is %d", field, len(p.Name), MaxKeyLength)
			}
		default:
			v.report(pat, pos, nil, "unknown key kind %d", p.Kind)
		}
	}
}

// nameProblem says what is wrong with a policy or tier name (what), or "".
func nameProblem(what, name string) string {
	switch {
	case name == "":
		return fmt.Sprintf("a %s needs a name", what)
	case len(name) > MaxNameLength:
		return fmt.Sprintf("%s name %s is %d bytes: the most is %d", what, brief(name), len(name), MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Sprintf("%s name %s: a name has only letters, digits, '-', '_' and '.'", what, brief(name))
		}
	}
	return ""
}

// isNameByte reports whether c may be in a policy or tier name.
func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// tokenProblem says why s is no HTTP token (a header name), or "".
func tokenProblem(what, s string) string {
	switch {
	case s == "":
		return fmt.Sprintf("the %s is empty", what)
	case len(s) > MaxKeyLength:
		return fmt.Sprintf("a %s of %d bytes: the most is %d", what, len(s), MaxKeyLength)
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return fmt.Sprintf("%s %s has %q, which an HTTP token cannot hold", what, brief(s), s[i:i+1])
		}
	}
	return ""
}

// isTokenByte reports whether c is a tchar of RFC 9110.
func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// methodProblem says what is wrong with a method, or "".
func methodProblem(m string) string {
	if msg := tokenProblem("method", m); msg != "" {
		return msg
	}
	if m != strings.ToUpper(m) {
		return fmt.Sprintf("method %s: methods are upper case", brief(m))
	}
	return ""
}

// hostProblem says what is wrong with a host, or "": a lower-case name or
// IPv4 address, or an IPv6 address (in brackets or not), without a port.
func hostProblem(h string) string {
	switch {
	case h == "":
		return "the host is empty"
	case len(h) > 255:
		return fmt.Sprintf("a host of %d bytes: the most is 255", len(h))
	case h != strings.ToLower(h):
		return fmt.Sprintf("host %s: hosts are lower case", brief(h))
	case h[0] == '[' || strings.Count(h, ":") > 1:
		addr := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if len(addr) < 2 || h[0] == '[' && h[len(h)-1] != ']' || strings.Trim(addr, "0123456789abcdef:.") != "" {
			return fmt.Sprintf("host %s: an IPv6 address is written without a port: 2001:db8::1 or [2001:db8::1]", brief(h))
		}
		return ""
	case strings.Contains(h, ":"):
		return fmt.Sprintf("host %s: a host is written without a port (the request's port is ignored)", brief(h))
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Sprintf("host %s has %q, which a host name cannot hold", brief(h), h[i:i+1])
		}
	}
	return ""
}
