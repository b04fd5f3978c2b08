package rules

import (
	"strings"
)

// edge is one name of a policy's replaces list that names another policy:
// item k of the list names policy to.
type edge struct{ to, k int }

// cross checks what concerns several policies: unique names, replaces
// naming existing policies and forming no cycle, and unreachable policies.
func (v *validator) cross(ps []Policy, at *path) {
	index := make(map[string]int, len(ps)) // the first policy of each name
	unnamed := false                       // a broken policy whose name is unknown
	for i := range ps {
		name := ps[i].Name
		if v.skip(i, "name") {
			unnamed = true
			continue
		}
		if j, dup := index[name]; dup {
			if name != "" {
				v.report(at.at(i).dot("name"), ps[i].Pos, nil, "duplicate policy name %s (first at %s)",
					brief(name), v.where(at.at(j).dot("name"), ps[j].Pos))
			}
			continue
		}
		index[name] = i
	}
	edges := make([][]edge, len(ps))
	for i := range ps {
		if v.skip(i, "*") {
			continue
		}
		for k, name := range ps[i].Replaces {
			j, ok := index[name]
			switch {
			case !ok && name != "" && !unnamed:
				v.report(at.at(i).dot("replaces").at(k), ps[i].Pos, nil, "no policy is named %s", brief(name))
			case ok && j != i && name != ps[i].Name:
				edges[i] = append(edges[i], edge{to: j, k: k})
			}
		}
	}
	v.cycles(ps, edges, at)
	v.unreachable(ps, edges, at)
}

// cycles reports every cycle of replaces, once, at the name that closes it.
func (v *validator) cycles(ps []Policy, edges [][]edge, at *path) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(ps))
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = open
		stack = append(stack, i)
		for _, e := range edges[i] {
			switch state[e.to] {
			case unseen:
				visit(e.to)
			case open:
				if v.f.full() {
					v.f.count() // not listed: spare writing the cycle
					continue
				}
				v.report(at.at(i).dot("replaces").at(e.k), ps[i].Pos, nil, "replaces forms a cycle: %s", cycleText(ps, stack, e.to))
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range ps {
		if state[i] == unseen {
			visit(i)
		}
	}
}

// cycleText writes the cycle that ends on the stack and returns to policy
// to: "a" -> "b" -> "a", shortened when long.
func cycleText(ps []Policy, stack []int, to int) string {
	start := len(stack) - 1
	for stack[start] != to {
		start--
	}
	loop := stack[start:]
	var parts []string
	for n, i := range loop {
		if len(loop) > 10 && n == 8 {
			parts = append(parts, "...", brief(ps[loop[len(loop)-1]].Name))
			break
		}
		parts = append(parts, brief(ps[i].Name))
	}
	parts = append(parts, brief(ps[to].Name))
	return strings.Join(parts, " -> ")
}

// unreachable reports the policies no request can reach: P is unreachable
// when a policy Q lists P in replaces, no policy replaces Q (so Q applies to
// every request it matches), and Q's match provably covers P's (see
// prover). It proves nothing it cannot, so it may miss some; and nothing at
// all when a policy's replaces could not be read (Q may be replaced).
func (v *validator) unreachable(ps []Policy, edges [][]edge, at *path) {
	for i := range ps {
		if v.skip(i, "replaces") || v.skip(i, "name") {
			return
		}
	}
	replaced := make([]bool, len(ps))
	for _, es := range edges {
		for _, e := range es {
			replaced[e.to] = true
		}
	}
	pr := newProver(ps)
	reported := make([]bool, len(ps))
	for q, es := range edges {
		if replaced[q] {
			continue
		}
		for _, e := range es {
			p := e.to
			if reported[p] || v.skip(p, "match") || v.skip(q, "match") || !pr.covers(q, p) {
				continue
			}
			reported[p] = true
			v.report(at.at(p), ps[p].Pos, nil, "unreachable: policy %s replaces it and matches every request it matches", brief(ps[q].Name))
		}
	}
}
