package rules

import (
	"fmt"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// What an edit keeps. A policy's counters live under its name (the
// namespace of its limiter), a tier's under the policy's name and the
// tier's, an override's under the policy's name and the key's; beside that
// name, a store keys a client's state by the algorithm and the number of
// limits, not by their figures (core.TakeRequest.Identity). So a reload
// that edits a policy's rates, periods or bursts keeps what every client
// used, re-expressed under the new figures; one that changes its algorithm
// or its number of limits, or renames it, starts its counters afresh.

// CounterFate is what a reload from one document to another does to the
// counters of one policy, tier or override.
type CounterFate uint8

// The fates of a scope's counters.
const (
	// CountersKept: the same algorithm and limits; nothing changes.
	CountersKept CounterFate = iota + 1
	// CountersReexpressed: the same algorithm and number of limits, other
	// figures: what each client used stays used, re-expressed under the new
	// limits (a meter keeps the requests it owes, a window its counts).
	CountersReexpressed
	// CountersRestarted: another algorithm or number of limits: every
	// client starts afresh.
	CountersRestarted
	// CountersNew: a policy, tier or override the old document did not
	// have: every client starts afresh (a client that an added override
	// takes out of a tier starts afresh under the override).
	CountersNew
	// CountersDropped: a policy, tier or override the new document does not
	// have (or has without limits): its counters are no longer read, and
	// expire in the store.
	CountersDropped
)

var counterFateNames = [...]string{
	CountersKept:        "kept",
	CountersReexpressed: "re-expressed",
	CountersRestarted:   "restarted",
	CountersNew:         "new",
	CountersDropped:     "dropped",
}

// String returns the fate's name: kept, re-expressed, restarted, new or
// dropped.
func (f CounterFate) String() string {
	if f >= CountersKept && f <= CountersDropped {
		return counterFateNames[f]
	}
	return fmt.Sprintf("CounterFate(%d)", uint8(f))
}

// CounterChange is what a reload does to the counters of one scope of a
// policy: its own limits, one tier's, or one override's.
type CounterChange struct {
	// Policy is the policy's name.
	Policy string
	// Scope is "" for the policy's own limits (for a tiered policy, its
	// default tier's, which it keeps under the policy's name), "tier NAME"
	// for another tier, "override KEY" for an override's own limits.
	Scope string
	// Fate is what happens to the scope's counters.
	Fate CounterFate
	// Detail says what changed, as the documents write it: "5/h -> 10/h",
	// "gcra -> fixed-window", "1 limit -> 2 limits"; empty when nothing did.
	Detail string
}

// String returns the change as rules diff prints it, e.g.
// "api tier pro: re-expressed (100/m -> 200/m)".
func (c CounterChange) String() string {
	var b strings.Builder
	b.WriteString(c.Policy)
	if c.Scope != "" {
		b.WriteString(" " + c.Scope)
	}
	b.WriteString(": " + c.Fate.String())
	if c.Detail != "" {
		b.WriteString(" (" + c.Detail + ")")
	}
	return b.String()
}

// CounterChanges returns what a reload from old to new does to the counters
// of every policy, tier and override with limits: in new's order, then
// those only old has (dropped). A nil old is a first load: every scope is
// new. Policies are matched by name, so a renamed policy is one dropped and
// one new.
func CounterChanges(old, new *Document) []CounterChange {
	before := map[string]counterScope{}
	if old != nil {
		for _, s := range counterScopes(old) {
			before[s.id] = s
		}
	}
	var out []CounterChange
	seen := map[string]bool{}
	if new != nil {
		for _, s := range counterScopes(new) {
			seen[s.id] = true
			o, ok := before[s.id]
			out = append(out, s.change(o, ok))
		}
	}
	if old != nil {
		for _, s := range counterScopes(old) {
			if !seen[s.id] {
				out = append(out, CounterChange{Policy: s.policy, Scope: s.scope, Fate: CountersDropped})
			}
		}
	}
	return out
}

// counterScope is one limiter a compiled policy keeps counters under.
type counterScope struct {
	id            string // the namespace, and an override's key
	policy, scope string
	alg           core.Algorithm
	limits        []core.Limit
	tier          string // the default tier's name, for the policy's own scope
}

// counterScopes lists doc's scopes with limits, as compile builds their
// limiters: the policy's (its default tier's) under its name, each other
// tier under the name and the tier's, each override with limits under the
// name and its key.
func counterScopes(doc *Document) []counterScope {
	var out []counterScope
	for i := range doc.Policies {
		p := &doc.Policies[i]
		if p.Unlimited {
			continue
		}
		own := counterScope{id: p.Name, policy: p.Name, alg: p.Algorithm, limits: p.Limits}
		if p.Tiers != nil {
			own.tier = p.Tiers.Default
			own.limits = tierLimits(p.Tiers, p.Tiers.Default)
		}
		out = append(out, own)
		if p.Tiers != nil {
			for _, lvl := range p.Tiers.Levels {
				if lvl.Name != p.Tiers.Default {
					out = append(out, counterScope{id: p.Name + "\x00" + tierName(p, lvl.Name), policy: p.Name,
						scope: "tier " + lvl.Name, alg: p.Algorithm, limits: lvl.Limits})
				}
			}
		}
		for _, o := range p.Overrides {
			if len(o.Limits) > 0 {
				out = append(out, counterScope{id: p.Name + "\x00override\x00" + o.Key, policy: p.Name,
					scope: "override " + o.Key, alg: p.Algorithm, limits: o.Limits})
			}
		}
	}
	return out
}

// change is what becomes of s's counters, which were o's (ok) or nobody's.
func (s counterScope) change(o counterScope, ok bool) CounterChange {
	c := CounterChange{Policy: s.policy, Scope: s.scope}
	switch {
	case !ok:
		c.Fate = CountersNew
	case o.alg != s.alg:
		c.Fate, c.Detail = CountersRestarted, o.alg.String()+" -> "+s.alg.String()
	case len(o.limits) != len(s.limits):
		c.Fate, c.Detail = CountersRestarted, countLimits(len(o.limits))+" -> "+countLimits(len(s.limits))
	case !core.SameFigures(o.limits, s.limits):
		c.Fate, c.Detail = CountersReexpressed, limitList(o.limits)+" -> "+limitList(s.limits)
	default:
		c.Fate = CountersKept
	}
	if ok && o.tier != s.tier {
		moved := "the default tier " + o.tier + "'s counters are now tier " + s.tier + "'s"
		if c.Detail == "" {
			c.Detail = moved
		} else {
			c.Detail += "; " + moved
		}
	}
	return c
}

func countLimits(n int) string {
	if n == 1 {
		return "1 limit"
	}
	return fmt.Sprintf("%d limits", n)
}

// limitList writes limits as a document does: "5/h" or "[5/s, 100/h]".
func limitList(ls []core.Limit) string {
	if len(ls) == 1 {
		return ls[0].String()
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
