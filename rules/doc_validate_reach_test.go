package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnreachable checks which policies the validator proves unreachable: a
// policy that replaces them, and that nothing replaces, matches every
// request they match. The cases it must not claim matter as much.
func TestUnreachable(t *testing.T) {
	tests := []struct {
		name     string
		q, p     string // the replacing policy's match and the replaced one's
		provable bool
	}{
		{"no match covers any", "{}", "{methods: [GET], paths: [/a]}", true},
		{"the root prefix covers a route pattern", "{prefixes: [/]}", "{paths: ['/api/items/{id}']}", true},
		{"a catch-all covers a route pattern", "{paths: ['/{rest...}']}", "{paths: ['/api/items/{id}']}", true},
		{"a prefix covers a longer prefix", "{prefixes: [/api]}", "{prefixes: [/api/v1]}", true},
		{"the root prefix covers every path", "{prefixes: [/]}", "{paths: [/], prefixes: [/x]}", true},
		{"a pattern covers itself, parameters renamed", "{paths: ['/a/{id}']}", "{paths: ['/a/{x}']}", true},
		{"more methods cover fewer", "{methods: [GET, POST]}", "{methods: [get], prefixes: [/x]}", true},
		{"a host covers itself with a final dot", "{hosts: [example.com]}", "{hosts: [Example.COM.]}", true},
		{"present is implied by equals", "{headers: [{name: X-A, present: true}]}", "{headers: [{name: x-a, equals: v}]}", true},
		{"fewer conditions cover more", "{headers: [{name: X-A, equals: v}]}", "{headers: [{name: X-A, equals: v}, {name: X-B, present: true}]}", true},
		{"every dimension at once", "{paths: ['/api/{y}'], prefixes: [/b], methods: [GET, PUT], hosts: [a.example], headers: [{name: K, present: true}]}",
			"{paths: ['/api/{x}'], methods: [PUT], hosts: [a.example], headers: [{name: K, equals: '1'}]}", true},

		{"a method list does not cover all methods", "{methods: [GET]}", "{}", false},
		{"a different method", "{methods: [GET]}", "{methods: [POST]}", false},
		{"a path does not cover a prefix", "{paths: [/api]}", "{prefixes: [/api]}", false},
		{"a prefix with a slash does not cover one without", "{prefixes: [/api/]}", "{prefixes: [/api]}", false},
		{"a prefix does not cover a sibling", "{prefixes: [/api]}", "{prefixes: [/apis]}", false},
		{"a literal does not cover a parameter", "{paths: [/a/b]}", "{paths: ['/a/{id}']}", false},
		{"a path does not cover a longer one", "{paths: [/a]}", "{paths: [/a/b]}", false},
		{"equals is not implied by present", "{headers: [{name: X, equals: v}]}", "{headers: [{name: X, present: true}]}", false},
		{"another value", "{headers: [{name: X, equals: v}]}", "{headers: [{name: X, equals: w}]}", false},
		{"another host", "{hosts: [a.example]}", "{hosts: [b.example]}", false},
		{"one path of two covered", "{prefixes: [/a]}", "{paths: [/a/x, /b/x]}", false},
		// A request routed to a route pattern's route may have any path
		// (Echo's "/api/items/1/%2E%2E/%2E%2E" reaches "/api/items/:id"):
		// only the same route, or every path, covers it.
		{"a prefix does not cover a route pattern under it", "{prefixes: [/api]}", "{paths: ['/api/items/{id}']}", false},
		{"a parameter does not cover a literal route", "{paths: ['/a/{id}']}", "{paths: [/a/b]}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := head + fmt.Sprintf("  - {name: q, unlimited: true, match: %s, replaces: [p]}\n  - {name: p, limits: [1/s], match: %s}\n", tt.q, tt.p)
			_, err := Parse([]byte(doc), "rules.yaml")
			if !tt.provable {
				require.NoError(t, err)
				return
			}
			requireProblems(t, err, want{"5:5", "policies[1]", `unreachable: policy "q" replaces it and matches every request it matches`})
		})
	}
}

// A policy that is itself replaced may be removed from a request, and then
// removes nothing: what it replaces is not proven unreachable (docs/rules.md:
// A replaces B, B replaces C, a request matching all three gets A and C).
func TestUnreachableNotThroughAReplacedPolicy(t *testing.T) {
	doc := head + `  - {name: a, unlimited: true, replaces: [b]}
  - {name: b, limits: [1/s], replaces: [c]}
  - {name: c, limits: [1/s]}
`
	_, err := Parse([]byte(doc), "rules.yaml")
	requireProblems(t, err, want{"5:5", "policies[1]", `unreachable: policy "a" replaces it`})
}

// The proof has a budget: huge matches replaced many times stop being
// compared (nothing more is claimed) rather than costing quadratic time.
func TestUnreachableWithinABudget(t *testing.T) {
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = fmt.Sprintf("/p%d", i)
	}
	list := "[" + strings.Join(paths, ", ") + "]"
	var b strings.Builder
	b.WriteString(head)
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
		fmt.Fprintf(&b, "  - {name: p%d, limits: [1/s], match: {paths: %s}}\n", i, list)
	}
	fmt.Fprintf(&b, "  - {name: q, unlimited: true, match: {paths: %s}, replaces: [%s]}\n", list, strings.Join(names, ", "))
	require.Less(t, b.Len(), MaxDocumentSize)

	_, err := Parse([]byte(b.String()), "rules.yaml")
	var ps *Problems
	require.ErrorAs(t, err, &ps)
	require.NotEmpty(t, ps.List, "what the budget allows is proven")
	require.Less(t, len(ps.List), len(names), "the rest is not compared")
	for _, p := range ps.List {
		require.Contains(t, p.Message, "unreachable")
	}
}
