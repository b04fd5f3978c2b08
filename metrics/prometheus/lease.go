package prommetrics

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// RegisterTokenLeases registers with reg counters of what the token leases
// (core.WithTokenLease) of each policy did on this instance, read from
// policies() at each scrape (httplimit.Policy.TokenLeaseStats, so they cost
// the decision path nothing):
//
//	ratewarden_token_lease_decisions_total{policy}        counter: decisions of a positive cost
//	ratewarden_token_lease_local_decisions_total{policy}  counter: decisions made with no store call
//	ratewarden_token_lease_store_calls_total{policy}      counter: store calls (decisions, refreshes, give-backs)
//	ratewarden_token_lease_refreshes_total{policy}        counter: background refreshes of a lease
//	ratewarden_token_lease_leased_tokens_total{policy}    counter: tokens the store granted to leases
//	ratewarden_token_lease_returned_tokens_total{policy}  counter: unspent tokens given back
//	ratewarden_token_lease_failures_total{policy}         counter: lease calls that failed or whose grant was refused
//
// The store calls per decision are rate(store_calls) / rate(decisions).
// One series per policy name (its limiter's Name; a policy's tiers and
// overrides count under it), never per key, at most WithMaxPolicies names
// apart and the rest under OverflowPolicy; policies that lease nothing have
// none. policies returns the policies in force: a fixed list for policies of
// your own, or a rule set's Policies (package rules), which follows its
// reloads. The counters never decrease across a reload: what a replaced
// policy did, and the tokens it gives back afterwards, stay counted under
// its name (observerkit.LeaseTotals). Sum them over instances for the
// fleet. WithNamespace, WithConstLabels and WithMaxPolicies apply.
//
// It returns the collector, for reg.Unregister, or an error wrapping
// ErrInvalid for a nil reg or policies or a bad option, and reg's error when
// registering fails.
func RegisterTokenLeases(reg prometheus.Registerer, policies func() []*httplimit.Policy, opts ...Option) (prometheus.Collector, error) {
	c, err := policyCollectorConfig(reg == nil, policies, opts)
	if err != nil {
		return nil, err
	}
	totals, err := observerkit.NewLeaseTotals(c.MaxPolicies)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	lc := &leaseCollector{policies: policies, totals: totals}
	for i, s := range leaseSeries {
		lc.descs[i] = prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "token_lease", s.name),
			s.help, []string{"policy"}, c.constLabels)
	}
	if err := reg.Register(lc); err != nil {
		return nil, fmt.Errorf("prommetrics: registering the token-lease counters: %w", err)
	}
	return lc, nil
}

// leaseSeries are the token-lease counters: their names after
// <namespace>_token_lease_, help texts and values.
var leaseSeries = [...]struct {
	name, help string
	value      func(core.TokenLeaseStats) int64
}{
	{"decisions_total", "Decisions of a positive cost by the policy's token-leasing limiters on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Decisions }},
	{"local_decisions_total", "Decisions the policy made on this instance with no store call: from a leased token, or a store denial repeated while its retry-after runs.",
		func(s core.TokenLeaseStats) int64 { return s.Local }},
	{"store_calls_total", "Store calls the policy's token-leasing limiters made on this instance: decisions, lease refreshes and give-backs.",
		func(s core.TokenLeaseStats) int64 { return s.Calls }},
	{"refreshes_total", "Background refreshes of the policy's token leases on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Refreshes }},
	{"leased_tokens_total", "Tokens the store granted to the policy's leases on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Leased }},
	{"returned_tokens_total", "Unspent leased tokens the policy gave back to the store on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Returned }},
	{"failures_total", "Lease calls of the policy on this instance (refreshes, give-backs) that failed or whose grant was refused.",
		func(s core.TokenLeaseStats) int64 { return s.Failures }},
}

// leaseCollector is a prometheus.Collector of the token-lease counters of
// policies.
type leaseCollector struct {
	policies func() []*httplimit.Policy
	totals   *observerkit.LeaseTotals
	descs    [len(leaseSeries)]*prometheus.Desc
}

func (lc *leaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range lc.descs {
		ch <- d
	}
}

func (lc *leaseCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range lc.totals.ByPolicy(lc.policies()) {
		label := strings.ToValidUTF8(p.Policy, "\uFFFD")
		for i, s := range leaseSeries {
			ch <- labelled(lc.descs[i], prometheus.CounterValue, float64(s.value(p.TokenLeaseStats)), label)
		}
	}
}
