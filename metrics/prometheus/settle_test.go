package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A settle's charge and return are counted per policy, never per key, and
// the debt it left goes into the histogram; a failed settle only into the
// outcome and the store errors.
func TestSettleMetrics(t *testing.T) {
	obs, reg := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Settled: 40, Decision: core.Decision{Debt: 12}})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Settled: -3})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSettled, Policy: "llm", Err: core.ErrInvalidCost})
	f := family(t, reg, "ratewarden_settled_cost_total")
	got := map[string]float64{}
	for _, m := range f.GetMetric() {
		l := labels(m)
		assert.Equal(t, "llm", l["policy"])
		got[l["direction"]] = m.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{"charged": 40, "returned": 3}, got)
	h := family(t, reg, "ratewarden_settle_debt").GetMetric()[0].GetHistogram()
	assert.Equal(t, uint64(2), h.GetSampleCount(), "two settles that succeeded")
	assert.Equal(t, 12.0, h.GetSampleSum())
	errs := family(t, reg, "ratewarden_store_errors_total").GetMetric()[0]
	assert.Equal(t, 1.0, errs.GetCounter().GetValue(), "the failed settle")
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		if labels(m)["outcome"] == "settled" {
			assert.Equal(t, 3.0, m.GetCounter().GetValue(), "every settle is a settled outcome")
		}
	}
}

// Through the middleware: a response naming its cost in X-Cost is settled
// and counted.
func TestSettleMetricsThroughMiddleware(t *testing.T) {
	obs, reg := newObserver(t)
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100), core.WithDebt(50),
		core.WithClock(core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	mw, err := stdhttp.New(lim, httplimit.WithSettleHeader("X-Cost"), httplimit.WithObserver(obs))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Cost", r.URL.Query().Get("n"))
	}))
	for _, n := range []string{"30", "0", "500"} {
		r := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/?n="+n, nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	f := family(t, reg, "ratewarden_settled_cost_total")
	got := map[string]float64{}
	for _, m := range f.GetMetric() {
		got[labels(m)["direction"]] = m.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{"charged": 29 + 499, "returned": 1}, got)
	hist := family(t, reg, "ratewarden_settle_debt").GetMetric()[0].GetHistogram()
	assert.Equal(t, 50.0, hist.GetSampleSum(), "the last settle left the whole debt bound")
}
