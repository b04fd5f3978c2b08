package otelmetrics_test

import (
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

// A penalty box's refusals are counted per policy under outcome "blocked",
// apart from the denial that started the block, and never per key; a
// blocked decision came from the store, so it closes the breaker gauge.
func TestBlockedOutcomeCounted(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1).Named("login"), core.WithClock(clk), core.WithBlockFor(time.Hour))
	require.NoError(t, err)
	obs, reader := newObserver(t)
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	serve := func(remote string) int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, remote := range []string{"192.0.2.1:1", "192.0.2.2:1"} {
		assert.Equal(t, 200, serve(remote))
		assert.Equal(t, 429, serve(remote))
		clk.Advance(2 * time.Minute) // the limit alone would admit again
		assert.Equal(t, 429, serve(remote))
		assert.Equal(t, 429, serve(remote))
	}
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeBreakerOpen, Policy: "login"})
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeBlocked, Policy: "login"})
	got := map[string]int64{}
	for k, v := range sums(t, collect(t, reader, "ratewarden.decisions")) {
		if v != 0 {
			got[k] = v
		}
	}
	assert.Equal(t, map[string]int64{
		key("login", "allowed"): 2, key("login", "denied"): 2, key("login", "blocked"): 5, key("login", "breaker_open"): 1,
	}, got)
	assert.Equal(t, map[string]int64{key("login"): 0}, gauges(t, reader), "a blocked decision was the store's")
}
