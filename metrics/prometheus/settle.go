package prommetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/httplimit"
)

// settleMetrics are what settles after the response (httplimit.WithSettle,
// WithSettleHeader) did, per policy: the cost they charged and gave back,
// and the debt they left keys in.
type settleMetrics struct {
	cost *prometheus.CounterVec
	debt *prometheus.HistogramVec
}

// DebtBuckets are the buckets of ratewarden_settle_debt: the debt a settle
// left its key in, in cost units, from none to a million.
var DebtBuckets = []float64{0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000}

// newSettleMetrics makes the settle metrics under c's namespace and labels.
func newSettleMetrics(c config) *settleMetrics {
	return &settleMetrics{
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace:   c.namespace,
			Name:        "settled_cost_total",
			Help:        "Cost settled after the response, by policy and direction: charged (the real cost above the reservation) or returned (below it).",
			ConstLabels: c.constLabels,
		}, []string{labelPolicy, "direction"}),
		debt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:   c.namespace,
			Name:        "settle_debt",
			Help:        "Debt a settle left its key in (what it owes beyond an empty quota, in cost units), by policy.",
			ConstLabels: c.constLabels,
			Buckets:     DebtBuckets,
		}, []string{labelPolicy}),
	}
}

// settleSeries are one policy's settle series.
type settleSeries struct {
	charged, returned prometheus.Counter
	debt              prometheus.Observer
}

// series resolves the settle series of one policy label value.
func (m *settleMetrics) series(label string) settleSeries {
	return settleSeries{
		charged:  m.cost.WithLabelValues(label, "charged"),
		returned: m.cost.WithLabelValues(label, "returned"),
		debt:     m.debt.WithLabelValues(label),
	}
}

// observe records a settle that succeeded: what it charged or returned,
// and the debt it left.
func (s *settleSeries) observe(e httplimit.Event) {
	switch {
	case e.Settled > 0:
		s.charged.Add(float64(e.Settled))
	case e.Settled < 0:
		s.returned.Add(-float64(e.Settled))
	}
	s.debt.Observe(float64(e.Decision.Debt))
}

func (m *settleMetrics) describe(ch chan<- *prometheus.Desc) {
	m.cost.Describe(ch)
	m.debt.Describe(ch)
}

func (m *settleMetrics) collect(ch chan<- prometheus.Metric) {
	m.cost.Collect(ch)
	m.debt.Collect(ch)
}
