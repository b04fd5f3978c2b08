package prommetrics

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// RegisterInFlight registers with reg a gauge of the in-flight slots
// (core.WithInFlight) each policy holds on this instance, read from
// policies() at each scrape (so it costs the decision path nothing):
//
//	ratewarden_inflight_slots{policy}          gauge: requests running under the policy's in-flight limit
//	ratewarden_inflight_expired_total{policy}  counter: slots lost to an expired lease under a running request
//
// A rising expired count means the bound was not held: renewals did not
// reach the store in time (see core.Limiter.SlotsExpired).
//
// one series per policy name (its limiter's Name), never per key, at most
// WithMaxPolicies names apart and the rest under OverflowPolicy; policies
// without an in-flight limit have none. policies returns the policies in
// force: a fixed list for policies of your own, or a rule set's Policies
// (package rules), which follows its reloads. Sum the gauge over instances
// for the fleet. WithNamespace, WithConstLabels and WithMaxPolicies apply.
//
// It returns the collector, for reg.Unregister, or an error wrapping
// ErrInvalid for a nil reg or policies or a bad option, and reg's error
// when registering fails.
func RegisterInFlight(reg prometheus.Registerer, policies func() []*httplimit.Policy, opts ...Option) (prometheus.Collector, error) {
	c, err := policyCollectorConfig(reg == nil, policies, opts)
	if err != nil {
		return nil, err
	}
	ic := &inflightCollector{
		policies: policies,
		max:      c.MaxPolicies,
		slots: prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "inflight", "slots"),
			"In-flight slots the policy holds on this instance: its requests running under its concurrency limit.", []string{"policy"}, c.constLabels),
		expired: prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "inflight", "expired_total"),
			"In-flight slots the policy lost on this instance because their lease expired while their request ran (the bound was not held).", []string{"policy"}, c.constLabels),
	}
	if err := reg.Register(ic); err != nil {
		return nil, fmt.Errorf("prommetrics: registering the in-flight gauge: %w", err)
	}
	return ic, nil
}

// inflightCollector is a prometheus.Collector of the slots policies hold.
type inflightCollector struct {
	policies func() []*httplimit.Policy
	max      int
	slots    *prometheus.Desc
	expired  *prometheus.Desc
}

func (ic *inflightCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- ic.slots
	ch <- ic.expired
}

func (ic *inflightCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range observerkit.SlotsByPolicy(ic.policies(), ic.max) {
		label := strings.ToValidUTF8(s.Policy, "\uFFFD")
		ch <- labelled(ic.slots, prometheus.GaugeValue, float64(s.Slots), label)
		ch <- labelled(ic.expired, prometheus.CounterValue, float64(s.Expired), label)
	}
}

// labelled is prometheus.NewConstMetric of one label value, reporting an
// error as an invalid metric.
func labelled(desc *prometheus.Desc, kind prometheus.ValueType, v float64, label string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(desc, kind, v, label)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}
