package observerkit

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// PolicyLeases is what the token leases (core.WithTokenLease) of the
// policies of one name did on this instance: counters, for a metrics
// collector.
type PolicyLeases struct {
	Policy string
	core.TokenLeaseStats
}

// LeaseTotals sums the token-lease counters of policies by policy name (the
// name of each policy's limiter), for the metrics modules' token-lease
// counters, read at each collection: per policy, never per key.
//
// A policy's own counters (httplimit.Policy.TokenLeaseStats) start at 0
// when it is built, so a rules reload that replaces a policy would make a
// plain sum drop. LeaseTotals keeps every name's counters from ever
// decreasing: a policy that leaves the list is still read at the next
// collections, at least one, until a reading finds it unchanged since the
// one before (so the give-back of its leased tokens after a reload is
// counted), and its last reading is then added to its name's total for
// good.
//
// A name keeps the series it is given first: the first maxPolicies names
// seen have one each, every later one is counted under OverflowPolicy, so no
// sequence of names grows memory and a counter never moves from one series
// to another. Policies that lease nothing are left out. It is safe for
// concurrent use.
type LeaseTotals struct {
	mu      sync.Mutex
	max     int
	names   map[string]struct{}                // the names with a series of their own
	live    map[*httplimit.Policy]leaseReading // policies listed or still retiring
	retired map[string]core.TokenLeaseStats    // what policies no longer read did, by series
}

// leaseReading is a policy's series and its last counters; gone once it
// was read after it left the list.
type leaseReading struct {
	series string
	stats  core.TokenLeaseStats
	gone   bool
}

// NewLeaseTotals returns the totals of at most maxPolicies names apart (the
// rest under OverflowPolicy). It returns an error for maxPolicies below 1.
func NewLeaseTotals(maxPolicies int) (*LeaseTotals, error) {
	if err := CheckMaxPolicies(maxPolicies); err != nil {
		return nil, fmt.Errorf("observerkit: %w", err)
	}
	return &LeaseTotals{max: maxPolicies, names: map[string]struct{}{},
		live: map[*httplimit.Policy]leaseReading{}, retired: map[string]core.TokenLeaseStats{}}, nil
}

// ByPolicy reads the token-lease counters of policies (the policies in
// force; nil ones are skipped, one listed twice is read once) and of the
// policies that left the list and still change, and returns each name's
// totals since the LeaseTotals was made, in name order.
func (t *LeaseTotals) ByPolicy(policies []*httplimit.Policy) []PolicyLeases {
	t.mu.Lock()
	defer t.mu.Unlock()
	listed := make(map[*httplimit.Policy]struct{}, len(policies))
	for _, p := range policies {
		if p == nil {
			continue
		}
		if _, dup := listed[p]; dup {
			continue
		}
		stats := p.TokenLeaseStats()
		r, known := t.live[p]
		if !known {
			if stats == (core.TokenLeaseStats{}) && p.Limiter().TokenLease().Max == 0 {
				continue
			}
			r.series = t.series(p.Limiter().Name())
		}
		listed[p] = struct{}{}
		r.stats, r.gone = stats, false
		t.live[p] = r
	}
	for p, r := range t.live {
		if _, ok := listed[p]; ok {
			continue
		}
		now := p.TokenLeaseStats()
		if r.gone && now == r.stats {
			t.retired[r.series] = addLeaseStats(t.retired[r.series], now)
			delete(t.live, p)
			continue
		}
		r.stats, r.gone = now, true
		t.live[p] = r
	}
	return t.totals()
}

// series returns the series of policy name: its own, if it has one or the
// bound leaves room, else OverflowPolicy.
func (t *LeaseTotals) series(name string) string {
	if _, ok := t.names[name]; ok {
		return name
	}
	if len(t.names) >= t.max {
		return OverflowPolicy
	}
	t.names[name] = struct{}{}
	return name
}

// totals adds up the retired and live counters by series, in name order.
func (t *LeaseTotals) totals() []PolicyLeases {
	sums := make(map[string]core.TokenLeaseStats, len(t.retired)+len(t.live))
	for name, s := range t.retired {
		sums[name] = s
	}
	for _, r := range t.live {
		sums[r.series] = addLeaseStats(sums[r.series], r.stats)
	}
	out := make([]PolicyLeases, 0, len(sums))
	for name, s := range sums {
		out = append(out, PolicyLeases{Policy: name, TokenLeaseStats: s})
	}
	slices.SortFunc(out, func(a, b PolicyLeases) int { return strings.Compare(a.Policy, b.Policy) })
	return out
}

// addLeaseStats returns a + b, counter by counter.
func addLeaseStats(a, b core.TokenLeaseStats) core.TokenLeaseStats {
	return core.TokenLeaseStats{
		Decisions: a.Decisions + b.Decisions,
		Local:     a.Local + b.Local,
		Calls:     a.Calls + b.Calls,
		Refreshes: a.Refreshes + b.Refreshes,
		Leased:    a.Leased + b.Leased,
		Returned:  a.Returned + b.Returned,
		Failures:  a.Failures + b.Failures,
	}
}
