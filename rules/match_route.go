package rules

import (
	"strings"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// A route pattern of a policy governs the requests the framework's router
// sends to the handler of that route, whatever their path: Echo gives a
// route's last parameter the rest of the path ("/users/7/x" reaches
// "/users/:id"), and Echo and Gin route a raw "%2E%2E" or ".." segment to a
// parameter, where the rules' {id} is one segment of the normalised path.
// So, when the request view tells the route its router matched
// (keyfuncs.MatchedRouteRequest), the policies whose route pattern is that
// route apply too, beside those the path matches.
//
// A route and a pattern are the same when their keys are: each segment
// "/" then, for a literal, its normal form in lower case; for a parameter
// (":id", "{id}") the marker "{}"; for a catch-all, last ("*", "*path",
// "{path...}"), the marker "{...}". A normal literal never holds '{' or '}',
// so a marker is never a literal. Parameter names do not count.

const (
	keyParam = "{}"    // a one-segment parameter in a key
	keyRest  = "{...}" // a catch-all in a key
)

// routeKeyMax is the length of the buffer, on the stack, a route's key is
// built in; a longer key is built on the heap.
const routeKeyMax = 256

// appendPatternKey appends the key of the route pattern p.
func appendPatternKey(dst []byte, p *pattern) []byte {
	for _, s := range p.segments {
		dst = append(dst, '/')
		if s.kind == segParam {
			dst = append(dst, keyParam...)
		} else {
			dst = appendLowerASCII(dst, s.text)
		}
	}
	if p.tail == tailRest {
		dst = append(dst, '/')
		dst = append(dst, keyRest...)
	}
	return dst
}

// appendRouteKey appends the key of route, a path pattern in a framework's
// syntax (Echo's and Gin's ":id", "*" and "*name"; Fiber's ":id", ":id?",
// "*" and "+"; net/http's "{id}", "{name...}" and a last "{$}"), and reports
// whether it has one: a route
// that does not start with "/", or with a wildcard inside a segment
// ("/file.:ext", "/static*", an escaped "\:"), is like no pattern of the
// rules, and has none.
func appendRouteKey(dst []byte, route string) ([]byte, bool) {
	if route == "" || route[0] != '/' {
		return dst, false
	}
	for pos := 1; pos <= len(route); {
		end := nextSegment(route, pos)
		seg, last := route[pos:end], end == len(route)
		pos = end + 1
		dst = append(dst, '/')
		switch routeSegmentKind(seg, last) {
		case routeParam:
			dst = append(dst, keyParam...)
		case routeRest:
			dst = append(dst, keyRest...)
		case routeEnd: // "{$}": the path ends with the "/" before it
		case routeLiteral:
			var ok bool
			if dst, ok = appendRouteLiteral(dst, seg); !ok {
				return dst, false
			}
		default:
			return dst, false
		}
	}
	return dst, true
}

// appendRouteLiteral appends seg, a literal segment of a route, in normal
// form and lower case: byte by byte when it is plain ASCII, the common case,
// else through appendSegment. It reports false for a segment with a
// wildcard inside ("file.:ext", "static*"), which no pattern has.
func appendRouteLiteral(dst []byte, seg string) ([]byte, bool) {
	n := len(dst)
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch routeBytes[c] {
		case routeBytePlain:
			dst = append(dst, c)
		case routeByteUpper:
			dst = append(dst, c+'a'-'A')
		case routeByteWildcard:
			return dst, false
		default: // an escape, or a byte a path carries encoded
			if hasWildcard(seg[i:]) {
				return dst, false
			}
			dst = appendSegment(dst[:n], seg)
			lowerInPlace(dst[n:])
			return dst, true
		}
	}
	return dst, true
}

// Byte classes of a route's literal, and of the name of a parameter.
const (
	routeByteOther    = iota // '%', or a byte a path carries percent-encoded
	routeBytePlain           // kept as it is
	routeByteUpper           // an upper-case ASCII letter
	routeByteWildcard        // ':', '*', '{', '}' or '\': starts or escapes a wildcard
)

// routeBytes is the class of every byte in a route.
var routeBytes = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = routeByteUpper
		case c == ':' || c == '*' || c == '{' || c == '}' || c == '\\':
			t[c] = routeByteWildcard
		case pathBytes[c] == byteUnreserved || pathBytes[c] == byteReserved:
			t[c] = routeBytePlain
		}
	}
	return t
}()

// What one segment of a framework's route is.
const (
	routeNone    = iota // a wildcard where no pattern has one
	routeLiteral        // matched as it is written (unless a wildcard is inside it)
	routeParam          // ":id" or "{id}": one segment
	routeRest           // "*", "*path" or "{path...}", last: the rest of the path
	routeEnd            // "{$}", last: the end of the path
)

// routeSegmentKind returns the kind of seg, a segment of a route, the last
// one when last.
func routeSegmentKind(seg string, last bool) int {
	switch {
	case seg == "":
		return routeLiteral
	case seg[0] == ':' && !hasWildcard(seg[1:]):
		return routeParam
	case (seg[0] == '*' || seg[0] == '+') && last && !hasWildcard(seg[1:]):
		return routeRest // Fiber's "+" is a catch-all of one byte or more
	case isParam(seg):
		name := seg[1 : len(seg)-1]
		switch {
		case name == "$":
			if last {
				return routeEnd
			}
			return routeNone
		case hasWildcard(name):
			return routeNone
		case strings.HasSuffix(name, "..."):
			if last {
				return routeRest
			}
			return routeNone
		}
		return routeParam
	}
	return routeLiteral // or a wildcard inside it: appendRouteLiteral tells
}

// hasWildcard reports whether s has a byte that starts or escapes a
// wildcard in some framework's routes: ':', '*', '{', '}' or '\'.
func hasWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		if routeBytes[s[i]] == routeByteWildcard {
			return true
		}
	}
	return false
}

// lowerInPlace puts the ASCII letters of b in lower case.
func lowerInPlace(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// routeIndex is the policies of each route pattern, by key.
type routeIndex map[string][]int32

// add indexes the route pattern p of policy i.
func (ix routeIndex) add(p *pattern, i int32) {
	k := string(appendPatternKey(nil, p))
	ix[k] = appendOnce(ix[k], i)
}

// addMatched adds to set the policies whose route pattern is the route r's
// router matched, when r's view tells it (keyfuncs.MatchedRouteRequest).
// It allocates nothing for a route whose key fits routeKeyMax bytes.
func (ix routeIndex) addMatched(r keyfuncs.Request, set bitset) {
	mr, ok := r.(keyfuncs.MatchedRouteRequest)
	if !ok {
		return
	}
	route := mr.MatchedRoute()
	if route == "" {
		return
	}
	var buf [routeKeyMax]byte
	if key, ok := appendRouteKey(buf[:0], route); ok {
		set.addAll(ix[string(key)]) // the lookup does not allocate
	}
}
