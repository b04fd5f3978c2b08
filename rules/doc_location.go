package rules

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// path is where a value sits in a document: a chain of fields (or map keys,
// such as tier names) and list indexes from the top. The nil *path is the
// document itself. Paths are built as the decoder descends, and rendered only
// for problems.
type path struct {
	up    *path
	name  string // a field name or a map key, when index < 0
	index int    // a list index, or -1
}

// dot returns the path of field name under p.
func (p *path) dot(name string) *path { return &path{up: p, name: name, index: -1} }

// at returns the path of item i of the list at p.
func (p *path) at(i int) *path { return &path{up: p, index: i} }

// elems returns the path's elements from the top.
func (p *path) elems() []*path {
	var out []*path
	for e := p; e != nil; e = e.up {
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// String renders the path as "policies[3].tiers.limits.free[0]"; a map key
// that is not a plain name is quoted: `tiers.limits["a b"]`.
func (p *path) String() string {
	var b strings.Builder
	for _, e := range p.elems() {
		switch {
		case e.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
		case plainName(e.name):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.name)
		default:
			b.WriteByte('[')
			b.WriteString(brief(e.name))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// plainName reports whether s can be written in a path without quotes:
// letters, digits, '_' and '-' only.
func plainName(s string) bool {
	if s == "" || len(s) > MaxNameLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isNameByte(c) || c == '.' {
			return false
		}
	}
	return true
}

// brief quotes s for a message, cut to 64 bytes (and a valid UTF-8 end) so
// that a hostile document cannot make its problems huge.
func brief(s string) string {
	const most = 64
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(cutUTF8(s, most)) + "..."
}

// cutUTF8 returns s cut to at most n bytes, not inside a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// locator returns a function that finds the position of a path in the
// document whose top node is top: the node the path names, or, when the
// document does not hold it (a value a policy took from defaults), the
// nearest enclosing node it does hold.
func locator(top *yaml.Node) func(*path) Pos {
	return func(at *path) Pos {
		n := top
		for _, e := range at.elems() {
			next := child(deref(n), e)
			if next == nil {
				break
			}
			n = next
		}
		return posOf(n)
	}
}

// child returns the node of element e in n (a list item or a mapping's
// value), or nil.
func child(n *yaml.Node, e *path) *yaml.Node {
	if e.index >= 0 {
		if n.Kind == yaml.SequenceNode && e.index < len(n.Content) {
			return n.Content[e.index]
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for _, en := range mappingEntries(n, nil) {
		if k := deref(en.key); k.Kind == yaml.ScalarNode && k.Value == e.name {
			return en.value
		}
	}
	return nil
}
