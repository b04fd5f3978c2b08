package prommetrics_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A penalty box's refusals are counted per policy under outcome="blocked",
// apart from the denial that started the block, and never per key; a
// blocked decision came from the store, so it closes the breaker gauge.
func TestBlockedOutcomeCounted(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(epoch)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1).Named("login"), core.WithClock(clk), core.WithBlockFor(time.Hour))
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	require.NoError(t, err)
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, remote := range []string{"192.0.2.1:1", "192.0.2.2:1"} {
		assert.Equal(t, 200, serve(h, remote))
		assert.Equal(t, 429, serve(h, remote))
		clk.Advance(2 * time.Minute) // the limit alone would admit again
		assert.Equal(t, 429, serve(h, remote))
		assert.Equal(t, 429, serve(h, remote))
	}
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeBreakerOpen, Policy: "login"})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeBlocked, Policy: "login"})
	got := map[string]float64{}
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		assert.Equal(t, "login", labels(m)["policy"])
		if v := m.GetCounter().GetValue(); v != 0 {
			got[labels(m)["outcome"]] = v
		}
	}
	assert.Equal(t, map[string]float64{"allowed": 2, "denied": 2, "blocked": 5, "breaker_open": 1}, got)
	gauge := family(t, reg, "ratewarden_breaker_open").GetMetric()
	require.Len(t, gauge, 1)
	assert.Equal(t, 0.0, gauge[0].GetGauge().GetValue(), "a blocked decision was the store's")
}
