package rules

import (
	"strings"

	"go.yaml.in/yaml/v4"
)

// field is one field an object of a document may hold, and how its value is
// decoded into the object's Go value (of type T). The tables of fields (see
// objectFields) are the one list of field names: the decoder refuses any
// other, and a test checks that schema.json lists exactly them.
type field[T any] struct {
	name   string
	decode func(d *decoder, v *yaml.Node, at *path, into T)
}

// names returns the table's field names, in order.
func names[T any](table []field[T]) []string {
	out := make([]string, len(table))
	for i, f := range table {
		out[i] = f.name
	}
	return out
}

// pick returns the fields of table named by names, in table order.
func pick[T any](table []field[T], names ...string) []field[T] {
	var out []field[T]
	for _, f := range table {
		for _, n := range names {
			if f.name == n {
				out = append(out, f)
			}
		}
	}
	return out
}

// decodeObject decodes the mapping n, an object (what names it for
// messages: "a policy"), through table into into: an unknown field, a
// duplicate field or a field name that is no string is a problem; the known
// fields are decoded in table order. It returns the value nodes of the fields
// present, the names of those whose values had problems (nil when none
// had), and false when n is not a mapping at all. Null is an empty object.
func decodeObject[T any](d *decoder, n *yaml.Node, at *path, what string, table []field[T], into T) (present map[string]*yaml.Node, failed map[string]bool, ok bool) {
	m := deref(n)
	present = map[string]*yaml.Node{}
	if isNull(m) {
		return present, nil, true
	}
	if m.Kind != yaml.MappingNode || m.Tag != tagMap {
		d.fail(m, at, nil, "want %s (a mapping), got %s", what, kindName(m))
		return nil, nil, false
	}
	keys := map[string]*yaml.Node{}
	for _, e := range d.entries(m, at) {
		k := deref(e.key)
		if k.Kind != yaml.ScalarNode || k.Tag != tagStr {
			d.fail(k, at, nil, "a field name must be a string, got %s", kindName(k))
			continue
		}
		name := k.Value
		if first := keys[name]; first != nil {
			d.fail(k, at, nil, "duplicate field %s (first at %s)", brief(name), posOf(first))
			continue
		}
		keys[name] = k
		if !hasField(table, name) {
			d.fail(k, at, nil, "unknown field %s in %s%s", brief(name), what, suggest(name, names(table)))
			continue
		}
		present[name] = e.value
	}
	for _, f := range table {
		v, ok := present[f.name]
		if !ok {
			continue
		}
		before := d.n
		f.decode(d, v, at.dot(f.name), into)
		if d.n > before {
			if failed == nil {
				failed = map[string]bool{}
			}
			failed[f.name] = true
		}
	}
	return present, failed, true
}

// hasField reports whether table has a field named name.
func hasField[T any](table []field[T], name string) bool {
	for _, f := range table {
		if f.name == name {
			return true
		}
	}
	return false
}

// entries returns the entries of mapping m, merge keys resolved, reporting a
// merge key that merges no mapping.
func (d *decoder) entries(m *yaml.Node, at *path) []mapEntry {
	return mappingEntries(m, func(bad *yaml.Node) {
		d.fail(deref(bad), at, nil, "a merge key (<<) takes a mapping or a list of mappings, got %s", kindName(deref(bad)))
	})
}

// require records a problem for each of names that present lacks.
func (d *decoder) require(n *yaml.Node, at *path, present map[string]*yaml.Node, names ...string) {
	for _, name := range names {
		if present[name] == nil {
			d.fail(deref(n), at, nil, "missing field %q", name)
		}
	}
}

// suggest returns " (did you mean "x"?)" for the field name closest to
// name, when one is close, or the list of the fields.
func suggest(name string, fields []string) string {
	if len(name) <= 64 {
		norm := strings.ReplaceAll(strings.ToLower(name), "-", "_")
		for _, f := range fields {
			if f == norm || editDistance(name, f) <= max(1, min(2, len(f)/4)) {
				return ` (did you mean "` + f + `"?)`
			}
		}
	}
	return " (the fields are " + strings.Join(fields, ", ") + ")"
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
