package rules

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// segmentKind is what one segment of a pattern matches.
type segmentKind uint8

const (
	// segLiteral matches exactly its text ("" only as the last segment: a
	// trailing "/").
	segLiteral segmentKind = iota
	// segParam, written {name}, matches any one non-empty segment.
	segParam
)

// tailKind is what a pattern accepts after its segments.
type tailKind uint8

const (
	// tailNone accepts nothing: the path ends with the pattern's last segment.
	tailNone tailKind = iota
	// tailRest accepts one or more segments, the first possibly empty: what
	// follows the "/" after the segments. A last {name...} and a prefix
	// ending in "/" have it: "/static/{rest...}" and the prefix "/static/"
	// match "/static/" and "/static/a/b", not "/static".
	tailRest
	// tailAny accepts anything or nothing: a prefix not ending in "/".
	// "/api" matches "/api", "/api/" and "/api/a", not "/apis".
	tailAny
)

// segment is one segment of a pattern: a literal, or a parameter's name.
type segment struct {
	kind segmentKind
	text string // the literal, in normal form; the parameter's name
}

// pattern is a parsed route pattern or prefix: a list of segments compared
// once each against the segments of a normal path (see normalizePath), then
// a tail. No regular expression, nothing that backtracks.
type pattern struct {
	text     string    // as written
	segments []segment // the segments after the leading "/"
	tail     tailKind
	restName string // the name of a last {name...}
	route    bool   // a route pattern (of paths), not a prefix: matched against a request's route too
}

// parsePattern parses a route pattern of a match's paths: it starts with
// "/"; a segment is a literal or a whole {name} (one non-empty segment); a
// last {name...} takes the rest of the path, possibly empty; names are Go
// identifiers, each used once; no empty segment ("//") but a trailing "/",
// no "." or ".." segment, and every literal in the normal form requests are
// matched in (normalizePath: no escape of an unreserved character, hex in
// upper case, no raw byte a path carries encoded). An error names the
// offending part.
func parsePattern(s string) (pattern, error) {
	if err := checkStart("route pattern", s); err != nil {
		return pattern{}, err
	}
	p := pattern{text: s, route: true}
	var seen map[string]bool
	for pos := 1; pos <= len(s); {
		end := nextSegment(s, pos)
		seg, last := s[pos:end], end == len(s)
		pos = end + 1
		if !isParam(seg) {
			if err := checkLiteral("route pattern", s, seg, last); err != nil {
				return pattern{}, err
			}
			p.segments = append(p.segments, segment{kind: segLiteral, text: seg})
			continue
		}
		name, rest := strings.CutSuffix(seg[1:len(seg)-1], "...")
		if !isIdentifier(name) {
			return pattern{}, fmt.Errorf("route pattern %q: parameter %q: %q is not a name (a letter or '_', then letters, digits or '_')", s, seg, name)
		}
		if seen[name] {
			return pattern{}, fmt.Errorf("route pattern %q: parameter name %q is used twice", s, name)
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[name] = true
		if rest {
			if !last {
				return pattern{}, fmt.Errorf("route pattern %q: %q must be the last segment: it takes the rest of the path", s, seg)
			}
			p.tail, p.restName = tailRest, name
			break
		}
		p.segments = append(p.segments, segment{kind: segParam, text: name})
	}
	return p, nil
}

// checkPrefix checks a path prefix of a match's prefixes: it starts with
// "/", has no empty segment ("//") but a trailing "/", no "." or ".."
// segment, no "{" or "}" (a prefix is literal), and is in the normal form
// requests are matched in (see parsePattern). An error names the offending
// part.
func checkPrefix(s string) error {
	_, err := parsePrefix(s)
	return err
}

// parsePrefix parses a path prefix (see checkPrefix) into the pattern that
// matches what it does: "/api" is the literal "api" and any tail, "/api/"
// the literal "api" and a tail of one segment or more, "/" every path.
func parsePrefix(s string) (pattern, error) {
	if err := checkStart("prefix", s); err != nil {
		return pattern{}, err
	}
	p := pattern{text: s, tail: tailAny}
	if s == "/" {
		p.tail = tailRest
		return p, nil
	}
	for pos := 1; pos <= len(s); {
		end := nextSegment(s, pos)
		seg, last := s[pos:end], end == len(s)
		pos = end + 1
		if err := checkLiteral("prefix", s, seg, last); err != nil {
			return pattern{}, err
		}
		if last && seg == "" {
			p.tail = tailRest // "/api/": "/api/" and below, not "/api"
			break
		}
		p.segments = append(p.segments, segment{kind: segLiteral, text: seg})
	}
	return p, nil
}

// checkStart checks that s, a route pattern or prefix (what), starts with "/".
func checkStart(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty: it must start with \"/\"", what)
	}
	if s[0] != '/' {
		return fmt.Errorf("%s %q must start with \"/\"", what, s)
	}
	return nil
}

// isParam reports whether seg is written as a parameter, {…}.
func isParam(seg string) bool {
	return len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}'
}

// isIdentifier reports whether name is a Go identifier.
func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if c == utf8.RuneError || !unicode.IsLetter(c) && c != '_' && (i == 0 || !unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

// checkLiteral checks one literal segment seg of s, a route pattern or
// prefix (what): not empty unless last, not a dot segment, and in normal
// form, so that it can equal a segment of a normal path.
func checkLiteral(what, s, seg string, last bool) error {
	switch {
	case seg == "" && !last:
		return fmt.Errorf("%s %q has an empty segment (\"//\"), which a normal path never has", what, s)
	case seg == "." || seg == "..":
		return fmt.Errorf("%s %q has a %q segment, which a normal path never has: write the path it stands for", what, s, seg)
	case what == "prefix" && strings.ContainsAny(seg, "{}"):
		return fmt.Errorf("prefix %q: segment %q has a \"{\" or \"}\": a prefix is literal (parameters belong in paths' route patterns)", s, seg)
	}
	if err := literalProblem(seg); err != nil {
		return fmt.Errorf("%s %q: segment %q %w", what, s, seg, err)
	}
	return nil
}

// literalProblem says what keeps seg from being a segment of a normal path,
// as the end of a sentence whose subject is seg; nil when nothing does.
func literalProblem(seg string) error {
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '{' || c == '}':
			return errors.New("has a \"{\" or \"}\" outside a whole {name} segment")
		case c == '%':
			if err := escapeProblem(seg[i:]); err != nil {
				return err
			}
			i += 2
		case pathBytes[c] == byteEscaped:
			return fmt.Errorf("has %q, which a path carries percent-encoded: write %q", seg[i:i+1], "%"+string([]byte{upperHex[c>>4], upperHex[c&15]}))
		}
	}
	return nil
}

// escapeProblem checks the escape that starts esc (at a '%').
func escapeProblem(esc string) error {
	if len(esc) < 3 || unhex(esc[1]) < 0 || unhex(esc[2]) < 0 {
		return errors.New("has a \"%\" that starts no escape (two hex digits): write \"%25\" for a \"%\"")
	}
	d := byte(unhex(esc[1])<<4 | unhex(esc[2]))
	if pathBytes[d] == byteUnreserved {
		return fmt.Errorf("has %q, an encoded %q, which paths are matched decoded: write %q", esc[:3], string(d), string(d))
	}
	if !isUpperHex(esc[1]) || !isUpperHex(esc[2]) {
		return fmt.Errorf("has %q: write its hex digits in upper case, %q", esc[:3], "%"+strings.ToUpper(esc[1:3]))
	}
	return nil
}

// match reports whether the normal path p (see normalizePath) matches the
// pattern: each segment compared once, without regard to ASCII case, then
// the tail; a trailing "/" the pattern does not have is ignored. It is the
// trie's walk for one pattern, for tests and tools.
func (pt *pattern) match(p string) bool {
	pos := 1 // p[0] is '/'; pos > len(p) once no segment is left
	for _, s := range pt.segments {
		if pos > len(p) {
			return false
		}
		end := nextSegment(p, pos)
		seg := p[pos:end]
		if s.kind == segLiteral && !equalFoldASCII(lowerASCII(s.text), seg) || s.kind == segParam && seg == "" {
			return false
		}
		pos = end + 1
	}
	switch pt.tail {
	case tailNone:
		return pos >= len(p)
	case tailRest:
		return pos <= len(p)
	}
	return true
}

// covers reports whether every request q matches, pt matches too: every
// path, and, when q is a route pattern, every request routed to q's route
// (see appendRouteKey), which pt matches only by being that route too or by
// matching every path. It is exact for what it answers true, and
// conservative (false) where proving it would take more than comparing the
// segments in order: the validator's "unreachable" check relies on it never
// claiming what does not hold.
func (pt *pattern) covers(q *pattern) bool {
	if q.route && !pt.matchesEveryPath() && !pt.sameRoute(q) {
		return false // a request routed to q's route may have any path
	}
	n := len(pt.segments)
	if len(q.segments) < n {
		return false
	}
	for i, s := range pt.segments {
		o := q.segments[i]
		switch {
		case s.kind == segLiteral && (o.kind != segLiteral || o.text != s.text):
			return false
		case s.kind == segParam && o.kind == segLiteral && o.text == "":
			return false
		}
	}
	switch pt.tail {
	case tailNone:
		return len(q.segments) == n && q.tail == tailNone
	case tailRest:
		return len(q.segments) > n || q.tail == tailRest
	}
	return true
}

// matchesEveryPath reports whether pt matches every normal path: "/" as a
// prefix, "/{rest...}".
func (pt *pattern) matchesEveryPath() bool {
	return len(pt.segments) == 0 && pt.tail != tailNone
}

// sameRoute reports whether pt and q are route patterns that differ at most
// in the names of their parameters (and so have one key).
func (pt *pattern) sameRoute(q *pattern) bool {
	if !pt.route || !q.route || pt.tail != q.tail || len(pt.segments) != len(q.segments) {
		return false
	}
	for i, s := range pt.segments {
		o := q.segments[i]
		if s.kind != o.kind || s.kind == segLiteral && !equalFoldASCII(lowerASCII(s.text), o.text) {
			return false
		}
	}
	return true
}

// String returns the pattern as written.
func (pt *pattern) String() string { return pt.text }
