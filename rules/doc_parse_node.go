package rules

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// YAML's tags of the values a document holds.
const (
	tagStr       = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagNull      = "!!null"
	tagTimestamp = "!!timestamp"
	tagMap       = "!!map"
	tagSeq       = "!!seq"
	tagMerge     = "!!merge"
)

// decoder turns a document's yaml.Node tree into a Document, field by field
// (never yaml's reflection), recording a problem for every node it cannot
// use. The guard has already bounded the tree's depth and its aliases, so
// following aliases here is safe.
type decoder struct {
	findings
	overrides int // overrides seen so far in the document
}

// fail records a problem at node n.
func (d *decoder) fail(n *yaml.Node, at *path, err error, format string, args ...any) {
	d.add(posOf(n), at, err, format, args...)
}

// posOf returns the position of n, at least line 1.
func posOf(n *yaml.Node) Pos {
	if n == nil || n.Line < 1 {
		return Pos{Line: 1}
	}
	return Pos{Line: n.Line, Column: n.Column}
}

// deref follows aliases to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isNull reports whether n (dereferenced) is YAML's null: "~", "null" or
// nothing at all.
func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == tagNull }

// kindName names what n is, for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		if n.Tag != tagMap {
			return "a mapping tagged " + brief(n.Tag)
		}
		return "a mapping"
	case yaml.SequenceNode:
		if n.Tag != tagSeq {
			return "a list tagged " + brief(n.Tag)
		}
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case tagStr:
			return "a string"
		case tagInt:
			return "an integer"
		case tagFloat:
			return "a number"
		case tagBool:
			return "a boolean"
		case tagNull:
			return "null"
		case tagTimestamp:
			return "a timestamp"
		}
		return "a value tagged " + brief(n.Tag)
	}
	return "nothing"
}

// str reads a string. Plain numbers and timestamps are taken as written
// (a name "2024" or a key "12345"); booleans, null and tagged values are
// refused, as a quoted string would say what is meant.
func (d *decoder) str(n *yaml.Node, at *path) (string, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case tagStr, tagInt, tagFloat, tagTimestamp:
			return n.Value, true
		}
	}
	d.fail(n, at, nil, "want a string, got %s", kindName(n))
	return "", false
}

// integer reads a whole number as YAML writes one ("10", "1_000", "0x1F").
func (d *decoder) integer(n *yaml.Node, at *path) (int64, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != tagInt {
		d.fail(n, at, nil, "want a whole number, got %s", kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil {
		d.fail(n, at, nil, "%s is out of range", brief(n.Value))
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, at *path) (bool, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != tagBool {
		d.fail(n, at, nil, "want true or false, got %s", kindName(n))
		return false, false
	}
	return strings.EqualFold(n.Value, "true"), true
}

// list returns the items of a list; null is the empty list.
func (d *decoder) list(n *yaml.Node, at *path, what string) ([]*yaml.Node, bool) {
	n = deref(n)
	switch {
	case n.Kind == yaml.SequenceNode && n.Tag == tagSeq:
		return n.Content, true
	case isNull(n):
		return nil, true
	}
	d.fail(n, at, nil, "want a list of %s, got %s", what, kindName(n))
	return nil, false
}

// strs reads a list of strings, each passed through norm (nil keeps them).
// A list with an item that is no string is a problem, and read as nil, so
// that the validator's paths (policies[0].match.paths[2]) name the items as
// written.
func (d *decoder) strs(n *yaml.Node, at *path, what string, norm func(string) string) []string {
	items, _ := d.list(n, at, what)
	if len(items) == 0 {
		return nil
	}
	out := make([]string, 0, len(items))
	good := true
	for i, it := range items {
		s, ok := d.str(it, at.at(i))
		good = good && ok
		if norm != nil {
			s = norm(s)
		}
		out = append(out, s)
	}
	if !good {
		return nil
	}
	return out
}

// limits reads a non-empty list of limits, each as core.ParseLimit reads it
// (the algorithm's own checks come in the validator, once the policy's
// algorithm and cost are known). A list with a limit that does not parse is
// a problem, and read as nil (see strs).
func (d *decoder) limits(n *yaml.Node, at *path) []core.Limit {
	items, ok := d.list(n, at, "limits such as [100/m]")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.fail(deref(n), at, nil, "no limits: write at least one, such as [100/m]")
		return nil
	}
	out := make([]core.Limit, 0, len(items))
	good := true
	for i, it := range items {
		s, ok := d.str(it, at.at(i))
		if !ok {
			good = false
			continue
		}
		l, err := core.ParseLimit(s)
		if err != nil {
			d.fail(deref(it), at.at(i), err, "%v", err)
			good = false
			continue
		}
		out = append(out, l)
	}
	if !good {
		return nil
	}
	return out
}

// choice reads a string that must be one of choices (a map from what is
// written to what it means).
func choice[T any](d *decoder, n *yaml.Node, at *path, choices map[string]T, list string) (T, bool) {
	var zero T
	s, ok := d.str(n, at)
	if !ok {
		return zero, false
	}
	v, ok := choices[s]
	if !ok {
		d.fail(deref(n), at, nil, "%s is not one of %s", brief(s), list)
		return zero, false
	}
	return v, true
}

// mapEntry is one key and value of a mapping.
type mapEntry struct{ key, value *yaml.Node }

// mappingEntries returns the entries of mapping n with its merge keys
// ("<<: *defaults") resolved: the merged mappings' entries follow n's own,
// leaving out keys n sets itself or an earlier merged mapping set. bad, when
// not nil, hears of a merge key whose value is not a mapping or a list of
// mappings.
func mappingEntries(n *yaml.Node, bad func(n *yaml.Node)) []mapEntry {
	var own, merged []mapEntry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if dk := deref(k); dk.Kind == yaml.ScalarNode && dk.Tag == tagMerge {
			merged = appendMerged(merged, v, bad)
			continue
		}
		own = append(own, mapEntry{k, v})
	}
	if len(merged) == 0 {
		return own
	}
	set := make(map[string]bool, len(own)+len(merged))
	for _, e := range own {
		if k := deref(e.key); k.Kind == yaml.ScalarNode {
			set[k.Value] = true
		}
	}
	for _, e := range merged {
		k := deref(e.key)
		if k.Kind != yaml.ScalarNode || !set[k.Value] {
			own = append(own, e)
			if k.Kind == yaml.ScalarNode {
				set[k.Value] = true
			}
		}
	}
	return own
}

// appendMerged appends the entries of a merge key's value: a mapping, or a
// list of mappings, earlier ones first.
func appendMerged(dst []mapEntry, v *yaml.Node, bad func(*yaml.Node)) []mapEntry {
	v = deref(v)
	switch v.Kind {
	case yaml.MappingNode:
		return append(dst, mappingEntries(v, bad)...)
	case yaml.SequenceNode:
		for _, it := range v.Content {
			if m := deref(it); m.Kind == yaml.MappingNode {
				dst = append(dst, mappingEntries(m, bad)...)
			} else if bad != nil {
				bad(it)
			}
		}
		return dst
	}
	if bad != nil {
		bad(v)
	}
	return dst
}
