package otelmetrics

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// RegisterTokenLeases makes observable counters of what the token leases
// (core.WithTokenLease) of each policy did on this instance, read from
// policies() at each collection (httplimit.Policy.TokenLeaseStats, so they
// cost the decision path nothing), on mp's Meter named ScopeName, each with
// the attribute policy (AttrPolicy):
//
//	ratewarden.token_lease.decisions        counter {decision}: decisions of a positive cost
//	ratewarden.token_lease.local_decisions  counter {decision}: decisions made with no store call
//	ratewarden.token_lease.store_calls      counter {call}: store calls (decisions, refreshes, give-backs)
//	ratewarden.token_lease.refreshes        counter {refresh}: background refreshes of a lease
//	ratewarden.token_lease.leased_tokens    counter {token}: tokens the store granted to leases
//	ratewarden.token_lease.returned_tokens  counter {token}: unspent tokens given back
//	ratewarden.token_lease.failures         counter {call}: lease calls that failed or whose grant was refused
//
// The store calls per decision are the rate of store_calls over the rate of
// decisions. One series per policy name (its limiter's Name; a policy's
// tiers and overrides count under it), never per key, at most
// WithMaxPolicies names apart and the rest under OverflowPolicy; policies
// that lease nothing have none. policies returns the policies in force: a
// fixed list for policies of your own, or a rule set's Policies (package
// rules), which follows its reloads. The counters never decrease across a
// reload: what a replaced policy did, and the tokens it gives back
// afterwards, stay counted under its name (observerkit.LeaseTotals).
// WithAttributes and WithMaxPolicies apply.
//
// It returns the callback's registration, whose Unregister stops the
// observations, or an error wrapping ErrInvalid for a nil mp or policies or
// a bad option, and the Meter's error when an instrument or the callback
// cannot be made.
func RegisterTokenLeases(mp metric.MeterProvider, policies func() []*httplimit.Policy, opts ...Option) (metric.Registration, error) {
	c, err := policyCollectorConfig(mp == nil, policies, opts)
	if err != nil {
		return nil, err
	}
	totals, err := observerkit.NewLeaseTotals(c.MaxPolicies)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	meter := mp.Meter(ScopeName)
	var insts [len(leaseInstruments)]metric.Int64ObservableCounter
	var errs []error
	for i, li := range leaseInstruments {
		insts[i], err = meter.Int64ObservableCounter("ratewarden.token_lease."+li.name,
			metric.WithUnit(li.unit), metric.WithDescription(li.description))
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otelmetrics: making the token-lease instruments: %w", err)
	}
	observables := make([]metric.Observable, len(insts))
	for i, inst := range insts {
		observables[i] = inst
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, p := range totals.ByPolicy(policies()) {
			kvs := append(append([]attribute.KeyValue{}, c.attrs...), AttrPolicy.String(p.Policy))
			attrs := metric.WithAttributeSet(attribute.NewSet(kvs...))
			for i, li := range leaseInstruments {
				o.ObserveInt64(insts[i], li.value(p.TokenLeaseStats), attrs)
			}
		}
		return nil
	}, observables...)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: registering the token-lease callback: %w", err)
	}
	return reg, nil
}

// leaseInstruments are the token-lease counters: their names after
// ratewarden.token_lease., units, descriptions and values.
var leaseInstruments = [...]struct {
	name, unit, description string
	value                   func(core.TokenLeaseStats) int64
}{
	{"decisions", "{decision}", "Decisions of a positive cost by the policy's token-leasing limiters on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Decisions }},
	{"local_decisions", "{decision}", "Decisions the policy made on this instance with no store call: from a leased token, or a store denial repeated while its retry-after runs.",
		func(s core.TokenLeaseStats) int64 { return s.Local }},
	{"store_calls", "{call}", "Store calls the policy's token-leasing limiters made on this instance: decisions, lease refreshes and give-backs.",
		func(s core.TokenLeaseStats) int64 { return s.Calls }},
	{"refreshes", "{refresh}", "Background refreshes of the policy's token leases on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Refreshes }},
	{"leased_tokens", "{token}", "Tokens the store granted to the policy's leases on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Leased }},
	{"returned_tokens", "{token}", "Unspent leased tokens the policy gave back to the store on this instance.",
		func(s core.TokenLeaseStats) int64 { return s.Returned }},
	{"failures", "{call}", "Lease calls of the policy on this instance (refreshes, give-backs) that failed or whose grant was refused.",
		func(s core.TokenLeaseStats) int64 { return s.Failures }},
}
