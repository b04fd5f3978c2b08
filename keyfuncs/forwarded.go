package keyfuncs

import (
	"net/netip"
	"strings"
)

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
		name, val, after, ok := nextForwardedPair(s)
		if !ok {
			return "", after, elemBad
		}
		s = after
		if strings.EqualFold(name, "for") {
			if seenFor {
				return "", skipElement(s), elemBad
			}
			seenFor, forVal = true, val
		}
		var more bool
		if s, more, ok = endForwardedPair(s); !ok {
			return "", s, elemBad
		}
		if !more {
			if !seenFor {
				return "", s, elemBad
			}
			return forVal, s, elemOK
		}
	}
}

// nextForwardedPair reads one name=value pair from s; when it is malformed, ok
// is false and rest is where the next element starts ("" when none can be).
func nextForwardedPair(s string) (name, val, rest string, ok bool) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '=' {
		return "", "", skipElement(s), false
	}
	val, rest, ok = forwardedValue(s[i+1:])
	return s[:i], val, rest, ok
}

// forwardedValue reads a pair's value, a token or a quoted-string, from the
// start of s, as nextForwardedPair does.
func forwardedValue(s string) (val, rest string, ok bool) {
	if s != "" && s[0] == '"' {
		return quotedForwardedValue(s)
	}
	j := 0
	for j < len(s) && isForwardedValueChar(s[j]) {
		j++
	}
	if j == 0 {
		return "", skipElement(s), false
	}
	return s[:j], s[j:], true
}

// quotedForwardedValue reads the quoted-string s starts with and returns it
// unquoted, as forwardedValue does.
func quotedForwardedValue(s string) (val, rest string, ok bool) {
	j := 1
	for j < len(s) && s[j] != '"' {
		if s[j] == '\\' {
			// No address contains a backslash: the value is not an
			// address, and the element is unusable.
			return "", skipElement(s[j:]), false
		}
		j++
	}
	if j == len(s) {
		return "", "", false // unterminated quote: the rest of the line is lost
	}
	return s[1:j], s[j+1:], true
}

// endForwardedPair reads what follows a pair: a ';' and another pair (more),
// or the element's end at a comma or the end of s. ok is false when anything
// else follows; rest is then where the next element starts.
func endForwardedPair(s string) (rest string, more, ok bool) {
	s = trimLeftOWS(s)
	switch {
	case s == "":
		return "", false, true
	case s[0] == ',':
		return s[1:], false, true
	case s[0] == ';':
		return trimLeftOWS(s[1:]), true, true
	}
	return skipElement(s), false, false
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
