package rules

import (
	"go.yaml.in/yaml/v4"
)

// The YAML parser (go.yaml.in/yaml/v4) builds a node tree in proportion to
// the input: it refuses nesting deeper than 10,000 levels itself, and it
// never expands an alias (an *alias node points at its anchor's node). What
// expands aliases, and so could run away on an alias bomb ("billion
// laughs": nine aliases of nine aliases of ... ), is whoever walks the tree.
// guard walks it once, before anything else does, with a budget: MaxDepth
// levels of mappings and lists, and MaxAliasNodes nodes (and MaxDocumentSize
// bytes of text: one long string used a thousand times costs as much as a
// thousand) reached through aliases in total, refusing a cyclic alias (an
// anchor used inside its own node). The decoder, which visits a part of what guard visited, then needs
// no budget of its own.

// aliasGuard is guard's state.
type aliasGuard struct {
	d        *decoder
	expanded int                 // nodes reached through aliases so far
	text     int                 // bytes of the scalars reached through aliases
	open     map[*yaml.Node]bool // anchors being expanded
	trail    []step              // where the walk is, for a problem's path
	outer    *yaml.Node          // the alias whose expansion the walk is in
	outerAt  int                 // len(trail) at outer
}

// step is one level of the walk: the i-th node of parent's Content.
type step struct {
	parent *yaml.Node
	i      int
}

// fail records a problem at n, the node the walk is at, with the path of
// the first depth steps of the walk.
func (g *aliasGuard) fail(n *yaml.Node, depth int, format string, args ...any) {
	var at *path
	for _, s := range g.trail[:depth] {
		at = childPath(s.parent, at, s.i)
	}
	g.d.add(posOf(n), at, nil, format, args...)
}

// overBudget records a problem of the aliases' budget at the outermost
// alias being expanded: the one written where the expansion starts.
func (g *aliasGuard) overBudget(format string, args ...any) {
	g.fail(g.outer, g.outerAt, format, args...)
}

// guard reports whether the tree under top is within the bounds, recording
// the problem when it is not.
func guard(d *decoder, top *yaml.Node) bool {
	g := &aliasGuard{d: d}
	return g.walk(top, 0, false)
}

// walk visits n, at nesting depth (the levels of mappings and lists around
// it), under an alias when aliased.
func (g *aliasGuard) walk(n *yaml.Node, depth int, aliased bool) bool {
	if aliased {
		g.expanded++
		g.text += len(n.Value)
		if g.expanded > MaxAliasNodes {
			g.overBudget("the document's aliases expand to more than %d nodes", MaxAliasNodes)
			return false
		}
		if g.text > MaxDocumentSize {
			g.overBudget("the document's aliases expand to more than %d bytes of text", MaxDocumentSize)
			return false
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return g.alias(n, depth)
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		if n.Kind != yaml.DocumentNode {
			depth++
		}
		if depth > MaxDepth {
			g.fail(n, len(g.trail), "the document nests mappings and lists more than %d levels deep", MaxDepth)
			return false
		}
		for i, c := range n.Content {
			g.trail = append(g.trail, step{n, i})
			ok := g.walk(c, depth, aliased)
			g.trail = g.trail[:len(g.trail)-1]
			if !ok {
				return false
			}
		}
	}
	return true
}

// alias visits the node an alias stands for, refusing one it is inside of.
func (g *aliasGuard) alias(n *yaml.Node, depth int) bool {
	target := n.Alias
	if target == nil {
		g.fail(n, len(g.trail), "an alias names the unknown anchor %s", brief(n.Value))
		return false
	}
	if g.open[target] {
		g.fail(n, len(g.trail), "an alias of anchor %s is used inside the node the anchor names: it would never end", brief(n.Value))
		return false
	}
	if g.open == nil {
		g.open = map[*yaml.Node]bool{}
	}
	if g.outer == nil {
		g.outer, g.outerAt = n, len(g.trail)
		defer func() { g.outer = nil }()
	}
	g.open[target] = true
	ok := g.walk(target, depth, true)
	delete(g.open, target)
	return ok
}

// childPath returns the path of the i-th node of n's Content under at, the
// path of n: an item of a list, or a mapping's value under its key.
func childPath(n *yaml.Node, at *path, i int) *path {
	switch n.Kind {
	case yaml.SequenceNode:
		return at.at(i)
	case yaml.MappingNode:
		if i%2 == 1 {
			if k := deref(n.Content[i-1]); k.Kind == yaml.ScalarNode && len(k.Value) <= MaxKeyLength {
				return at.dot(k.Value)
			}
		}
	}
	return at
}
