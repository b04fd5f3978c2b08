package rules

import (
	"bytes"
	"strings"
)

// Byte classes of a request path in its normal form (RFC 3986's pchar).
const (
	byteEscaped    = iota // must be percent-encoded: space, controls, non-ASCII, "{}[]<>\"^`|\\#?"
	byteUnreserved        // ALPHA, DIGIT, '-', '.', '_', '~': never percent-encoded
	byteReserved          // sub-delims, ':' and '@': kept as they are written, encoded or not
	byteSlash             // '/', the segment separator
	bytePercent           // '%', which starts an escape
)

// pathBytes is the class of every byte.
var pathBytes = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = byteUnreserved, byteUnreserved
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byteUnreserved
	}
	for _, c := range "-._~" {
		t[c] = byteUnreserved
	}
	for _, c := range "!$&'()*+,;=:@" {
		t[c] = byteReserved
	}
	t['/'], t['%'] = byteSlash, bytePercent
	return t
}()

const upperHex = "0123456789ABCDEF"

// unhex is the value of an upper- or lower-case hex digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// isUpperHex reports whether c is a digit or an upper-case hex letter.
func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

// normalizePath returns p in the normal form every path is matched in, the
// same in every adapter:
//
//   - percent-encoded unreserved characters are decoded ("%69" -> "i",
//     "%7E" -> "~"); every other escape stays, with upper-case hex ("%2f" ->
//     "%2F": an encoded "/" is not a separator);
//   - a byte that a path never carries raw (a space, a control character, a
//     non-ASCII byte, a '%' that starts no escape) is encoded, so a view that
//     hands over a decoded path is matched as the encoded one would be;
//   - empty segments ("//") are dropped, and "." and ".." segments resolved
//     (".." never climbs above the root), after decoding, so "%2e%2e" is a
//     ".." too;
//   - a trailing "/" stays (a path ending in a "." or ".." segment ends in
//     "/", as RFC 3986 resolves it), a missing leading "/" is added, and ""
//     becomes "/".
//
// A path already in normal form, the common case, is returned as it is,
// without allocating.
func normalizePath(p string) string {
	if isNormalPath(p) {
		return p
	}
	out, _ := rewritePath(p, false)
	return out
}

// pathForms returns the forms of p a policy's path conditions are matched
// against: its normal form (see normalizePath) and, when p has a "." or
// ".." segment (decoded: "%2E%2E" is one too), the form in which those are
// kept as segments, otherwise "". Echo, Gin and Fiber do not resolve dot
// segments, and route "/users/.." or "/users/%2E%2E" to "/users/:id", whose
// policy must govern it, though the path resolves to "/".
func pathForms(p string) (normal, dotted string) {
	if isNormalPath(p) {
		return p, ""
	}
	normal, dots := rewritePath(p, false)
	if dots {
		dotted, _ = rewritePath(p, true)
	}
	return normal, dotted
}

// isNormalPath reports whether normalizePath would return p unchanged.
func isNormalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	start := 1 // of the current segment
	for i := 1; i < len(p); i++ {
		switch pathBytes[p[i]] {
		case byteSlash:
			if isDotOrEmpty(p[start:i]) {
				return false
			}
			start = i + 1
		case bytePercent:
			if i+2 >= len(p) || !isUpperHex(p[i+1]) || !isUpperHex(p[i+2]) ||
				pathBytes[unhex(p[i+1])<<4|unhex(p[i+2])] == byteUnreserved {
				return false
			}
			i += 2
		case byteEscaped:
			return false
		}
	}
	last := p[start:]
	return last != "." && last != ".."
}

// isDotOrEmpty reports whether seg is "", "." or "..".
func isDotOrEmpty(seg string) bool { return seg == "" || seg == "." || seg == ".." }

// rewritePath is normalizePath for a path that is not normal: it builds the
// normal form segment by segment; with keepDots, "." and ".." segments are
// kept as segments rather than resolved. It reports whether p has a "." or
// ".." segment.
func rewritePath(p string, keepDots bool) (string, bool) {
	dots := false
	out := make([]byte, 0, len(p)+8)
	trailing := true // whether the result ends in "/"
	for p != "" {
		if p[0] == '/' {
			p = p[1:]
		}
		raw := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			raw, p = p[:i], p[i:]
		} else {
			p = ""
		}
		n := len(out)
		out = append(out, '/')
		out = appendSegment(out, raw)
		seg := out[n+1:]
		dot, dotdot := string(seg) == ".", string(seg) == ".." // no allocation: compared, not kept
		dots = dots || dot || dotdot
		switch {
		case (dot || dotdot) && keepDots:
			trailing = false
		case len(seg) == 0 || dot:
			out, trailing = out[:n], true
		case dotdot:
			out = out[:n]
			if i := bytes.LastIndexByte(out, '/'); i >= 0 {
				out = out[:i]
			}
			trailing = true
		default:
			trailing = false
		}
	}
	if trailing || len(out) == 0 {
		out = append(out, '/')
	}
	return string(out), dots
}

// appendSegment appends seg (one segment, without '/') to out in normal form:
// unreserved escapes decoded, other escapes upper-cased, bytes a path never
// carries raw encoded.
func appendSegment(out []byte, seg string) []byte {
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch pathBytes[c] {
		case bytePercent:
			if i+2 < len(seg) && unhex(seg[i+1]) >= 0 && unhex(seg[i+2]) >= 0 {
				d := byte(unhex(seg[i+1])<<4 | unhex(seg[i+2]))
				i += 2
				if pathBytes[d] == byteUnreserved {
					out = append(out, d)
				} else {
					out = append(out, '%', upperHex[d>>4], upperHex[d&15])
				}
				continue
			}
			out = append(out, "%25"...)
		case byteEscaped:
			out = append(out, '%', upperHex[c>>4], upperHex[c&15])
		default:
			out = append(out, c)
		}
	}
	return out
}

// nextSegment returns the end of the segment of the normal path p that
// starts at pos (the index of the next '/', or len(p)).
func nextSegment(p string, pos int) int {
	if i := strings.IndexByte(p[pos:], '/'); i >= 0 {
		return pos + i
	}
	return len(p)
}

// Route patterns and request paths are compared without regard to ASCII
// case: Fiber routes case-insensitively by default, so "/API/items/1" reaches
// the handler of "/api/items/:id" there, and a policy on that route must
// govern it. In normal form a path holds only ASCII (anything else is
// percent-encoded), so ASCII folding is all the folding there is.

// hasUpperASCII reports whether s has an upper-case ASCII letter.
func hasUpperASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// appendLowerASCII appends s to dst with its ASCII letters in lower case.
func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// lowerASCII returns s with its ASCII letters in lower case.
func lowerASCII(s string) string {
	if !hasUpperASCII(s) {
		return s
	}
	return string(appendLowerASCII(make([]byte, 0, len(s)), s))
}

// equalFoldASCII reports whether lower (in lower case) and s are equal
// without regard to ASCII case.
func equalFoldASCII(lower, s string) bool {
	if len(lower) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
