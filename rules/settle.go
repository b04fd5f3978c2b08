package rules

import (
	"net/http"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Settle is a policy's settle ("settle"): each request reserves Reserve at
// admission and, when its response is done, settles at the real cost the
// response header Header names (httplimit.WithSettleHeader): the difference
// is given back or charged, into a debt of at most Debt beyond an empty
// quota (core.WithDebt). A policy with a settle counts no failures, sets
// no cost (Reserve is its cost), and is no sliding-log policy.
type Settle struct {
	// Header ("header") is the response header that names the real cost, a
	// decimal integer; a response without it keeps its reservation.
	Header string
	// Reserve ("reserve") is what a request reserves at admission (default
	// 1; 0 reserves nothing and charges the whole cost after).
	Reserve int64
	// Debt ("debt") is what a key may owe beyond an empty quota after a
	// settle charged more than it had (default 0); at most the capacity of
	// each of the policy's limits.
	Debt int64
}

// settleFields are a settle's fields.
var settleFields = []field[*Settle]{
	{"header", func(d *decoder, v *yaml.Node, at *path, s *Settle) {
		if h, ok := d.str(v, at); ok {
			if len(h) > 256 || !keyfuncs.ValidHeaderName(h) {
				d.fail(deref(v), at, nil, "settle header %s is not a header name (such as X-Cost)", brief(h))
				return
			}
			s.Header = http.CanonicalHeaderKey(h)
		}
	}},
	{"reserve", func(d *decoder, v *yaml.Node, at *path, s *Settle) {
		if n, ok := d.integer(v, at); ok {
			if n < 0 {
				d.fail(deref(v), at, nil, "reserve %d: what a request reserves is 0 or more", n)
				return
			}
			s.Reserve = n
		}
	}},
	{"debt", func(d *decoder, v *yaml.Node, at *path, s *Settle) {
		if n, ok := d.integer(v, at); ok {
			if n < 0 {
				d.fail(deref(v), at, nil, "debt %d: what a key may owe is 0 or more", n)
				return
			}
			s.Debt = n
		}
	}},
}

// decodeSettle reads a policy's settle: {header: NAME, reserve: N, debt: N}.
func decodeSettle(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s := &Settle{Reserve: 1}
	present, failed, ok := decodeObject(d, v, at, "a settle", settleFields, s)
	if !ok || len(failed) > 0 {
		return
	}
	if present["header"] == nil {
		d.require(v, at, present, "header")
		return
	}
	p.Settle = s
}

// policySettle reports, at the field, what a policy's settle cannot go
// with: a cost (the settle's reserve is the cost), counting only failures
// (both settle the cost), the sliding log (it cannot charge after the
// response), or a debt or reserve above a limit's capacity. It returns the
// names of the fields with problems.
func (d *decoder) policySettle(present map[string]*yaml.Node, at *path, p *Policy) []string {
	n := present["settle"]
	if n == nil || p.Settle == nil {
		return nil
	}
	sat := at.dot("settle")
	switch {
	case present["cost"] != nil:
		d.fail(deref(present["cost"]), at.dot("cost"), nil, "a settling policy reserves settle's reserve (default 1): remove cost")
		return []string{"cost", "settle"}
	case p.CountFailuresOnly:
		d.fail(deref(n), sat, nil, "settle and count: failures both settle a request's cost after its response: keep one")
		return []string{"settle"}
	case p.Algorithm == core.SlidingLog:
		d.fail(deref(n), sat, nil, "sliding-log cannot charge a cost after the response (it records each admitted unit's instant): use sliding-window, token-bucket or gcra")
		return []string{"settle"}
	}
	for _, l := range settleLimits(p) {
		c := p.Algorithm.Capacity(l)
		if p.Settle.Debt > c {
			d.fail(fieldNode(n, "debt"), sat.dot("debt"), nil, "debt %d exceeds %q's capacity of %d: a debt is at most one whole quota", p.Settle.Debt, l.String(), c)
			return []string{"settle"}
		}
		if p.Settle.Reserve > c {
			d.fail(fieldNode(n, "reserve"), sat.dot("reserve"), nil, "reserve %d exceeds %q's capacity of %d: every request would be denied", p.Settle.Reserve, l.String(), c)
			return []string{"settle"}
		}
	}
	return nil
}

// settleLimits are every limit a policy's settle applies under: its own,
// its tiers' and its overrides'.
func settleLimits(p *Policy) []core.Limit {
	out := append([]core.Limit(nil), p.Limits...)
	if p.Tiers != nil {
		for _, lvl := range p.Tiers.Levels {
			out = append(out, lvl.Limits...)
		}
	}
	for _, o := range p.Overrides {
		out = append(out, o.Limits...)
	}
	return out
}

// fieldNode returns the value of the mapping n's field name, or n when it
// has none.
func fieldNode(n *yaml.Node, name string) *yaml.Node {
	m := deref(n)
	if m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if deref(m.Content[i]).Value == name {
				return deref(m.Content[i+1])
			}
		}
	}
	return m
}

// settleCost is the cost a policy's requests reserve: its settle's
// reserve, or its cost.
func settleCost(p *Policy) int64 {
	if p.Settle != nil {
		return p.Settle.Reserve
	}
	return p.Cost
}

// canonSettle is a settle in a document's canonical form (doc_digest.go).
type canonSettle struct {
	Header  string `json:"header"`
	Reserve int64  `json:"reserve"`
	Debt    int64  `json:"debt"`
}

// canonicalSettle is s in the canonical form; nil for none.
func canonicalSettle(s *Settle) *canonSettle {
	if s == nil {
		return nil
	}
	return &canonSettle{Header: s.Header, Reserve: s.Reserve, Debt: s.Debt}
}
