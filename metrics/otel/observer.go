package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// Observer is an httplimit.Observer that records every decision with
// OpenTelemetry instruments (the package doc lists them). It is safe for
// concurrent use.
//
// Observe reads the event's outcome, policy, store latency and error, never
// its request. It builds no attribute set: the measurement options of a
// policy are made once, when the policy is first seen, and found again with
// one atomic load and one map lookup.
type Observer struct {
	decisions   metric.Int64Counter
	duration    metric.Float64Histogram
	storeErrors metric.Int64Counter
	breaker     metric.Int64Gauge
	attrs       []attribute.KeyValue
	rules       atomic.Pointer[rulesInForce] // what ObserveRules heard last
	settle      settleInstruments            // settle.go

	table *observerkit.PolicyTable[*policyOptions] // at most the bound's names, then OverflowPolicy
}

// policyOptions are the precomputed attribute sets of one policy, each
// wrapped as the one-element option list the instruments take.
type policyOptions struct {
	decisions [][]metric.AddOption  // indexed by httplimit.Outcome
	unknown   []metric.AddOption    // an outcome not in httplimit.Outcomes
	duration  []metric.RecordOption // the policy alone: for the gauge too
	errors    []metric.AddOption
	settle    settleOptions

	breakerOpen atomic.Bool // what ratewarden.breaker.open was last set to
	breakerMu   sync.Mutex  // held to change breakerOpen and the gauge together
}

// setBreaker records open in o's ratewarden.breaker.open gauge for p,
// unless it says so already.
func (o *Observer) setBreaker(p *policyOptions, open bool) {
	if p.breakerOpen.Load() == open {
		return
	}
	p.breakerMu.Lock()
	defer p.breakerMu.Unlock()
	if p.breakerOpen.Load() != open {
		p.breakerOpen.Store(open)
		var v int64
		if open {
			v = 1
		}
		o.breaker.Record(context.Background(), v, p.duration...)
	}
}

// New makes an Observer whose instruments come from mp's Meter named
// ScopeName (for the global provider, otel.GetMeterProvider()). It returns
// an error wrapping ErrInvalid for a nil mp or a bad option, and the Meter's
// error when an instrument cannot be made.
func New(mp metric.MeterProvider, opts ...Option) (*Observer, error) {
	if mp == nil {
		return nil, fmt.Errorf("%w: nil metric.MeterProvider", ErrInvalid)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	meter := mp.Meter(ScopeName)
	o := &Observer{attrs: c.attrs}
	var errs [5]error
	o.decisions, errs[0] = meter.Int64Counter("ratewarden.decisions",
		metric.WithUnit("{decision}"),
		metric.WithDescription("Rate-limit decisions, by policy and outcome."))
	o.duration, errs[1] = meter.Float64Histogram("ratewarden.store.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time a rate-limit decision spent in its store."),
		metric.WithExplicitBucketBoundaries(c.Buckets...))
	o.storeErrors, errs[2] = meter.Int64Counter("ratewarden.store.errors",
		metric.WithUnit("{error}"),
		metric.WithDescription("Rate-limit store calls that failed (the request then failed open or closed), and failed refunds."))
	o.breaker, errs[3] = meter.Int64Gauge("ratewarden.breaker.open",
		metric.WithUnit("1"),
		metric.WithDescription("1 while the store's circuit breaker answers the policy's requests without asking the store (the breaker_open outcome), 0 once the store decides them again."))
	_, errs[4] = meter.Int64ObservableGauge("ratewarden.rules.version",
		metric.WithUnit("1"),
		metric.WithDescription("Version of the rules document in force (rules.Set); its attribute ratewarden.rules.digest is the first 12 hex digits of the document's content digest."),
		metric.WithInt64Callback(o.observeRules))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("otelmetrics: making the instruments: %w", err)
	}
	if err := o.settle.make(meter); err != nil {
		return nil, err
	}
	o.table = observerkit.NewPolicyTable(c.MaxPolicies, OverflowPolicy, o.makeOptions)
	return o, nil
}

// Observe counts e under its policy and outcome, records its store latency
// in seconds when it had one, and counts a store error when e carries one
// that is not a key error, a full store's refusal (counted only as the
// store_full outcome) nor the open breaker's (breaker_open: no store call).
// The policy's ratewarden.breaker.open gauge goes to 1 on a breaker_open
// decision and back to 0 on one the store decided (allowed, denied,
// dry_run_denied). It implements httplimit.Observer.
func (o *Observer) Observe(e httplimit.Event) {
	p := o.table.Get(e.Policy)
	ctx := context.Background() // never the request's: Observe reads nothing of it
	add := p.unknown
	if int(e.Outcome) < len(p.decisions) && p.decisions[e.Outcome] != nil {
		add = p.decisions[e.Outcome]
	}
	o.decisions.Add(ctx, 1, add...)
	if e.StoreLatency > 0 {
		o.duration.Record(ctx, e.StoreLatency.Seconds(), p.duration...)
	}
	if e.Outcome == httplimit.OutcomeSettled && e.Err == nil {
		o.settle.observe(ctx, &p.settle, e)
	}
	switch e.Outcome {
	case httplimit.OutcomeBreakerOpen:
		o.setBreaker(p, true)
		return
	case httplimit.OutcomeAllowed, httplimit.OutcomeDenied, httplimit.OutcomeDryRunDenied, httplimit.OutcomeBlocked:
		o.setBreaker(p, false)
	}
	if e.Err != nil && e.Outcome != httplimit.OutcomeKeyError && e.Outcome != httplimit.OutcomeStoreFull {
		o.storeErrors.Add(ctx, 1, p.errors...)
	}
}

// makeOptions builds the attribute sets of one policy value.
func (o *Observer) makeOptions(policy string) *policyOptions {
	withOutcome := func(name string) []metric.AddOption {
		kvs := append(append([]attribute.KeyValue{}, o.attrs...), AttrPolicy.String(policy), AttrOutcome.String(name))
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
	}
	policyOnly := metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue{}, o.attrs...), AttrPolicy.String(policy))...))
	p := &policyOptions{
		decisions: make([][]metric.AddOption, observerkit.OutcomeSlots()),
		unknown:   withOutcome(httplimit.Outcome(0).String()),
		duration:  []metric.RecordOption{policyOnly},
		errors:    []metric.AddOption{policyOnly},
		settle:    o.settle.options(o.attrs, policy),
	}
	for _, out := range httplimit.Outcomes() {
		p.decisions[out] = withOutcome(out.String())
	}
	o.breaker.Record(context.Background(), 0, p.duration...) // a policy's gauge exists from its first decision
	return p
}
