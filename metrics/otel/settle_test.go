package otelmetrics_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
)

// A settle's charge and return are recorded per policy, never per key, and
// the debt it left goes into the histogram; a failed settle is not.
func TestSettleInstruments(t *testing.T) {
	obs, reader := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Settled: 40, Decision: core.Decision{Debt: 12}})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Settled: -3})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Err: core.ErrInvalidCost})
	dir := func(d string) string {
		s := attribute.NewSet(otelmetrics.AttrPolicy.String("llm"), otelmetrics.AttrDirection.String(d))
		return s.Encoded(attribute.DefaultEncoder())
	}
	assert.Equal(t, map[string]int64{dir("charged"): 40, dir("returned"): 3}, sums(t, collect(t, reader, "ratewarden.settle.cost")))
	h, ok := collect(t, reader, "ratewarden.settle.debt").Data.(metricdata.Histogram[int64])
	require.True(t, ok)
	require.Len(t, h.DataPoints, 1)
	assert.Equal(t, uint64(2), h.DataPoints[0].Count, "two settles that succeeded")
	assert.Equal(t, int64(12), h.DataPoints[0].Sum)
	assert.Equal(t, int64(3), sums(t, collect(t, reader, "ratewarden.decisions"))[key("llm", "settled")])
}
