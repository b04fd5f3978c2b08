package otelmetrics

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// RegisterInFlight makes an observable instrument of the in-flight slots
// (core.WithInFlight) each policy holds on this instance, read from
// policies() at each collection (so it costs the decision path nothing), on
// mp's Meter named ScopeName:
//
//	ratewarden.inflight.slots    up-down counter {slot}, attribute policy: requests running under its in-flight limit
//	ratewarden.inflight.expired  counter {slot}, attribute policy: slots lost to an expired lease under a running request
//
// one series per policy name (its limiter's Name), never per key, at most
// WithMaxPolicies names apart and the rest under OverflowPolicy; policies
// without an in-flight limit have none. policies returns the policies in
// force: a fixed list for policies of your own, or a rule set's Policies
// (package rules), which follows its reloads. WithAttributes and
// WithMaxPolicies apply.
//
// It returns the callback's registration, whose Unregister stops the
// observations, or an error wrapping ErrInvalid for a nil mp or policies or
// a bad option, and the Meter's error when the instrument or the callback
// cannot be made.
func RegisterInFlight(mp metric.MeterProvider, policies func() []*httplimit.Policy, opts ...Option) (metric.Registration, error) {
	c, err := policyCollectorConfig(mp == nil, policies, opts)
	if err != nil {
		return nil, err
	}
	meter := mp.Meter(ScopeName)
	slots, err := meter.Int64ObservableUpDownCounter("ratewarden.inflight.slots",
		metric.WithUnit("{slot}"),
		metric.WithDescription("In-flight slots the policy holds on this instance: its requests running under its concurrency limit."))
	expired, errExpired := meter.Int64ObservableCounter("ratewarden.inflight.expired",
		metric.WithUnit("{slot}"),
		metric.WithDescription("In-flight slots the policy lost on this instance because their lease expired while their request ran (the bound was not held)."))
	if err := errors.Join(err, errExpired); err != nil {
		return nil, fmt.Errorf("otelmetrics: making the in-flight instruments: %w", err)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range observerkit.SlotsByPolicy(policies(), c.MaxPolicies) {
			kvs := append(append([]attribute.KeyValue{}, c.attrs...), AttrPolicy.String(s.Policy))
			attrs := metric.WithAttributeSet(attribute.NewSet(kvs...))
			o.ObserveInt64(slots, s.Slots, attrs)
			o.ObserveInt64(expired, s.Expired, attrs)
		}
		return nil
	}, slots, expired)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: registering the in-flight callback: %w", err)
	}
	return reg, nil
}
