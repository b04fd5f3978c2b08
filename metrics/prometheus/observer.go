package prommetrics

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

const (
	labelPolicy  = "policy"
	labelOutcome = "outcome"
)

// Observer is an httplimit.Observer that exports every decision as
// Prometheus metrics (the package doc lists them). It is also the
// prometheus.Collector of those metrics, registered by New; pass it to
// Unregister to remove them. It is safe for concurrent use.
//
// Observe reads the event's outcome, policy, store latency and error, never
// its request. It costs no allocation: the series of a policy are resolved
// once, when the policy is first seen, and found again with one atomic load
// and one map lookup.
type Observer struct {
	decisions   *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
	breaker     *prometheus.GaugeVec
	rules       *rulesMetric
	settle      *settleMetrics // settle.go

	table *observerkit.PolicyTable[*policySeries] // at most maxPolicies names, then OverflowPolicy
}

// policySeries are the resolved series of one policy label value.
type policySeries struct {
	decisions   []prometheus.Counter // indexed by httplimit.Outcome
	latency     prometheus.Observer
	storeErrors prometheus.Counter
	breaker     breakerGauge
	settle      settleSeries
	label       string
}

// breakerGauge is a policy's breaker_open series and the value it was last
// set to, so that a decision reads a flag instead of writing the gauge.
type breakerGauge struct {
	gauge prometheus.Gauge
	open  atomic.Bool
	mu    sync.Mutex // held to change open and the gauge together
}

// set makes the gauge say open, when it does not already.
func (b *breakerGauge) set(open bool) {
	if b.open.Load() == open {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open.Load() != open {
		b.open.Store(open)
		v := 0.0
		if open {
			v = 1
		}
		b.gauge.Set(v)
	}
}

// New makes an Observer and registers its metrics with reg (for the default
// registry, prometheus.DefaultRegisterer). It returns an error wrapping
// ErrInvalid for a nil reg or a bad option, and reg's error (such as a
// prometheus.AlreadyRegisteredError when another Observer with the same
// namespace and const labels is registered there) when registering fails.
func New(reg prometheus.Registerer, opts ...Option) (*Observer, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil prometheus.Registerer", ErrInvalid)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	o := &Observer{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace:   c.namespace,
			Name:        "decisions_total",
			Help:        "Rate-limit decisions, by policy and outcome (allowed, denied, dry_run_denied, failed_open, failed_closed, key_error, skipped, refunded, store_full, breaker_open).",
			ConstLabels: c.constLabels,
		}, []string{labelPolicy, labelOutcome}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:   c.namespace,
			Name:        "store_latency_seconds",
			Help:        "Time a rate-limit decision spent in its store, in seconds, by policy.",
			ConstLabels: c.constLabels,
			Buckets:     c.Buckets,
		}, []string{labelPolicy}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace:   c.namespace,
			Name:        "store_errors_total",
			Help:        "Rate-limit store calls that failed (the request then failed open or closed), and failed refunds, by policy.",
			ConstLabels: c.constLabels,
		}, []string{labelPolicy}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace:   c.namespace,
			Name:        "breaker_open",
			Help:        "1 while the store's circuit breaker answers the policy's requests without asking the store (the breaker_open outcome), 0 once the store decides them again, by policy.",
			ConstLabels: c.constLabels,
		}, []string{labelPolicy}),
	}
	o.rules = newRulesMetric(c)
	o.settle = newSettleMetrics(c)
	o.table = observerkit.NewPolicyTable(c.MaxPolicies, OverflowPolicy, o.resolve)
	if err := reg.Register(o); err != nil {
		return nil, fmt.Errorf("prommetrics: registering the observer's metrics: %w", err)
	}
	return o, nil
}

// Observe counts e under its policy and outcome, records its store latency
// in seconds when it had one, and counts a store error when e carries one
// that is not a key error, a full store's refusal (counted only as the
// store_full outcome) nor the open breaker's (breaker_open: no store call).
// The policy's breaker_open gauge goes to 1 on a breaker_open decision and
// back to 0 on one the store decided (allowed, denied, dry_run_denied). It
// implements httplimit.Observer.
func (o *Observer) Observe(e httplimit.Event) {
	s := o.table.Get(e.Policy)
	if int(e.Outcome) < len(s.decisions) && s.decisions[e.Outcome] != nil {
		s.decisions[e.Outcome].Inc()
	} else {
		// Not one of httplimit.Outcomes: a caller's bug, counted as it
		// names itself ("unknown") on the slow path.
		o.decisions.WithLabelValues(s.label, e.Outcome.String()).Inc()
	}
	if e.StoreLatency > 0 {
		s.latency.Observe(e.StoreLatency.Seconds())
	}
	if e.Outcome == httplimit.OutcomeSettled && e.Err == nil {
		s.settle.observe(e)
	}
	switch e.Outcome {
	case httplimit.OutcomeBreakerOpen:
		s.breaker.set(true)
		return
	case httplimit.OutcomeAllowed, httplimit.OutcomeDenied, httplimit.OutcomeDryRunDenied, httplimit.OutcomeBlocked:
		s.breaker.set(false)
	}
	if e.Err != nil && e.Outcome != httplimit.OutcomeKeyError && e.Outcome != httplimit.OutcomeStoreFull {
		s.storeErrors.Inc()
	}
}

// resolve makes the series of one policy label value, every outcome at 0.
func (o *Observer) resolve(policy string) *policySeries {
	label := policy
	if !utf8.ValidString(label) {
		label = strings.ToValidUTF8(label, "\uFFFD") // WithLabelValues panics on invalid UTF-8
	}
	s := &policySeries{
		decisions:   make([]prometheus.Counter, observerkit.OutcomeSlots()),
		latency:     o.latency.WithLabelValues(label),
		storeErrors: o.storeErrors.WithLabelValues(label),
		label:       label,
	}
	s.breaker.gauge = o.breaker.WithLabelValues(label)
	s.settle = o.settle.series(label)
	for _, out := range httplimit.Outcomes() {
		s.decisions[out] = o.decisions.WithLabelValues(label, out.String())
	}
	return s
}

// Describe sends the descriptors of the Observer's metrics. It implements
// prometheus.Collector.
func (o *Observer) Describe(ch chan<- *prometheus.Desc) {
	o.decisions.Describe(ch)
	o.latency.Describe(ch)
	o.storeErrors.Describe(ch)
	o.breaker.Describe(ch)
	o.rules.describe(ch)
	o.settle.describe(ch)
}

// Collect sends the Observer's metrics. It implements prometheus.Collector.
func (o *Observer) Collect(ch chan<- prometheus.Metric) {
	o.decisions.Collect(ch)
	o.latency.Collect(ch)
	o.storeErrors.Collect(ch)
	o.breaker.Collect(ch)
	o.rules.collect(ch)
	o.settle.collect(ch)
}
