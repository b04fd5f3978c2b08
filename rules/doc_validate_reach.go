package rules

import (
	"slices"
	"strings"
)

// proofBudget bounds the work of proving policies unreachable, in
// comparisons of match values over the whole document. A document that would
// need more (matches of thousands of values, replaced many times) gets no
// more unreachable findings: the check proves what it can and claims nothing
// else.
const proofBudget = 1 << 22

// prover proves that a policy Q's match covers a policy P's: every request P
// matches, Q matches. Per dimension: Q's field is empty; or (methods, hosts)
// P's is not and Q's includes all of it; or (headers) every condition of Q's
// is implied by one of P's; or (paths and prefixes together) P has some and
// each is covered by one of Q's, as pattern.covers decides. Anything it
// cannot prove (a pattern that does not parse, the budget spent) is false.
type prover struct {
	ps       []Policy
	patterns map[int][]pattern // the parsed paths and prefixes of a policy
	bad      map[int]bool      // policies whose paths or prefixes do not parse
	budget   int
}

func newProver(ps []Policy) *prover {
	return &prover{ps: ps, patterns: map[int][]pattern{}, bad: map[int]bool{}, budget: proofBudget}
}

// covers reports whether policy q's match provably covers policy p's.
func (pr *prover) covers(q, p int) bool {
	mq, mp := &pr.ps[q].Match, &pr.ps[p].Match
	return pr.set(mq.Methods, mp.Methods, strings.ToUpper) && pr.set(mq.Hosts, mp.Hosts, hostKey) &&
		pr.headers(mq.Headers, mp.Headers) && pr.paths(q, p)
}

// spend takes n from the budget, reporting false when it runs out.
func (pr *prover) spend(n int) bool {
	pr.budget -= n
	return pr.budget >= 0
}

// set reports whether Q's values (any of which matches) cover P's, each
// compared in the form norm gives it (the form the selector matches).
func (pr *prover) set(q, p []string, norm func(string) string) bool {
	if len(q) == 0 {
		return true
	}
	if len(p) == 0 || !pr.spend(len(q)*len(p)) {
		return false
	}
	for _, x := range p {
		x = norm(x)
		if !slices.ContainsFunc(q, func(y string) bool { return norm(y) == x }) {
			return false
		}
	}
	return true
}

// hostKey is a host as the selector compares it.
func hostKey(h string) string { return hostOnly(strings.ToLower(h)) }

// headers reports whether every condition of Q's (all of which must hold)
// is implied by one of P's.
func (pr *prover) headers(q, p []HeaderMatch) bool {
	if len(q) == 0 {
		return true
	}
	if len(p) == 0 || !pr.spend(len(q)*len(p)) {
		return false
	}
	for _, c := range q {
		if !slices.ContainsFunc(p, func(h HeaderMatch) bool { return implies(h, c) }) {
			return false
		}
	}
	return true
}

// implies reports whether a request that meets condition h meets c.
func implies(h, c HeaderMatch) bool {
	return strings.EqualFold(h.Name, c.Name) && (c.Present || !h.Present && h.Value == c.Value)
}

// paths reports whether Q's paths and prefixes cover P's.
func (pr *prover) paths(q, p int) bool {
	qs, ok := pr.parsed(q)
	if !ok {
		return false
	}
	if len(qs) == 0 {
		return true
	}
	ps, ok := pr.parsed(p)
	if !ok || len(ps) == 0 || !pr.spend(len(qs)*len(ps)) {
		return false
	}
	for i := range ps {
		if !slices.ContainsFunc(qs, func(x pattern) bool { return x.covers(&ps[i]) }) {
			return false
		}
	}
	return true
}

// parsed returns policy i's paths and prefixes as patterns, parsed once.
func (pr *prover) parsed(i int) ([]pattern, bool) {
	if pr.bad[i] {
		return nil, false
	}
	if pts, ok := pr.patterns[i]; ok {
		return pts, true
	}
	m := &pr.ps[i].Match
	pts := make([]pattern, 0, len(m.Paths)+len(m.Prefixes))
	for _, s := range m.Paths {
		pt, err := parsePattern(s)
		if err != nil {
			pr.bad[i] = true
			return nil, false
		}
		pts = append(pts, pt)
	}
	for _, s := range m.Prefixes {
		pt, err := parsePrefix(s)
		if err != nil {
			pr.bad[i] = true
			return nil, false
		}
		pts = append(pts, pt)
	}
	pr.patterns[i] = pts
	return pts, true
}
