package otelmetrics

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratewarden/ratewarden/httplimit"
)

// AttrDirection is the attribute of ratewarden.settle.cost: "charged" (the
// real cost above the reservation) or "returned" (below it).
const AttrDirection = attribute.Key("ratewarden.settle.direction")

// settleInstruments are what settles after the response
// (httplimit.WithSettle, WithSettleHeader) did, per policy: the cost they
// charged and gave back, and the debt they left keys in.
type settleInstruments struct {
	cost metric.Int64Counter
	debt metric.Int64Histogram
}

// DebtBuckets are the bucket boundaries of ratewarden.settle.debt: the
// debt a settle left its key in, in cost units, from none to a million.
var DebtBuckets = []float64{0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000}

// make makes the settle instruments from meter.
func (s *settleInstruments) make(meter metric.Meter) error {
	var err1, err2 error
	s.cost, err1 = meter.Int64Counter("ratewarden.settle.cost",
		metric.WithUnit("{cost}"),
		metric.WithDescription("Cost settled after the response, by policy and direction: charged (the real cost above the reservation) or returned (below it)."))
	s.debt, err2 = meter.Int64Histogram("ratewarden.settle.debt",
		metric.WithUnit("{cost}"),
		metric.WithDescription("Debt a settle left its key in: what it owes beyond an empty quota, in cost units."),
		metric.WithExplicitBucketBoundaries(DebtBuckets...))
	if err1 != nil {
		return fmt.Errorf("otelmetrics: making ratewarden.settle.cost: %w", err1)
	}
	if err2 != nil {
		return fmt.Errorf("otelmetrics: making ratewarden.settle.debt: %w", err2)
	}
	return nil
}

// settleOptions are one policy's precomputed settle attribute sets.
type settleOptions struct {
	charged, returned []metric.AddOption
	debt              []metric.RecordOption
}

// options builds the settle attribute sets of policy, beside attrs.
func (s *settleInstruments) options(attrs []attribute.KeyValue, policy string) settleOptions {
	with := func(kv ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(append(append(append([]attribute.KeyValue{}, attrs...), AttrPolicy.String(policy)), kv...)...)
	}
	return settleOptions{
		charged:  []metric.AddOption{metric.WithAttributeSet(with(AttrDirection.String("charged")))},
		returned: []metric.AddOption{metric.WithAttributeSet(with(AttrDirection.String("returned")))},
		debt:     []metric.RecordOption{metric.WithAttributeSet(with())},
	}
}

// observe records a settle that succeeded under p's options.
func (s *settleInstruments) observe(ctx context.Context, p *settleOptions, e httplimit.Event) {
	switch {
	case e.Settled > 0:
		s.cost.Add(ctx, e.Settled, p.charged...)
	case e.Settled < 0:
		s.cost.Add(ctx, -e.Settled, p.returned...)
	}
	s.debt.Record(ctx, e.Decision.Debt, p.debt...)
}
