package prommetrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// serve sends one GET / from remote through h and returns the status.
func serve(h http.Handler, remote string) int {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestThroughMiddleware drives the observer through stdhttp's middleware and
// a memory store, then reads what promhttp serves.
func TestThroughMiddleware(t *testing.T) {
	tests := []struct {
		name       string
		opts       []httplimit.Option
		wantFailed int    // status once the store is closed
		outcome    string // outcome of that request
	}{
		{"fail open", nil, http.StatusOK, "failed_open"},
		{"fail closed", []httplimit.Option{httplimit.WithFailClosed()}, http.StatusServiceUnavailable, "failed_closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := memory.New()
			require.NoError(t, err)
			lim, err := core.NewLimiter(remote{st}, core.FixedWindow, core.PerMinute(2), core.WithClock(core.NewManualClock(epoch)))
			require.NoError(t, err)
			reg := prometheus.NewRegistry()
			obs, err := prommetrics.New(reg)
			require.NoError(t, err)
			mw, err := stdhttp.New(lim, append(tt.opts, httplimit.WithObserver(obs))...)
			require.NoError(t, err)
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

			for _, want := range []int{200, 200, 429} {
				assert.Equal(t, want, serve(h, "192.0.2.1:1234"))
			}
			require.NoError(t, st.Close())
			assert.Equal(t, tt.wantFailed, serve(h, "192.0.2.1:1234"))

			want := map[string]float64{"allowed": 2, "denied": 1, tt.outcome: 1}
			got := map[string]float64{}
			for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
				require.Equal(t, "default", labels(m)["policy"])
				if v := m.GetCounter().GetValue(); v != 0 {
					got[labels(m)["outcome"]] = v
				}
			}
			assert.Equal(t, want, got)
			assert.Equal(t, len(httplimit.Outcomes()), testutil.CollectAndCount(obs, "ratewarden_decisions_total"),
				"every outcome exported from the first decision on")
			latency := family(t, reg, "ratewarden_store_latency_seconds").GetMetric()
			require.Len(t, latency, 1)
			assert.Equal(t, uint64(4), latency[0].GetHistogram().GetSampleCount(), "every store call timed, the failed one too")
			assert.Greater(t, latency[0].GetHistogram().GetSampleSum(), 0.0)
			errs := family(t, reg, "ratewarden_store_errors_total").GetMetric()
			require.Len(t, errs, 1)
			assert.Equal(t, 1.0, errs[0].GetCounter().GetValue())

			rec := httptest.NewRecorder()
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			assert.Contains(t, rec.Body.String(), "ratewarden_decisions_total{outcome=\"denied\",policy=\"default\"} 1\n")
			assert.Contains(t, rec.Body.String(), "ratewarden_store_latency_seconds_count{policy=\"default\"} 4\n")
			assert.NotContains(t, rec.Body.String(), "192.0.2.1", "no request data in a label")
		})
	}
}

// TestObserverAddsNoAllocationPerRequest compares a request through the
// middleware with and without the observer: the observer adds nothing.
func TestObserverAddsNoAllocationPerRequest(t *testing.T) {
	allocs := func(opts ...httplimit.Option) float64 {
		st, err := memory.New()
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000), core.WithClock(core.NewManualClock(epoch)))
		require.NoError(t, err)
		mw, err := stdhttp.New(lim, opts...)
		require.NoError(t, err)
		h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req) // the key's first request inserts it
		require.Equal(t, http.StatusOK, rec.Code)
		return testing.AllocsPerRun(1000, func() {
			clear(rec.Header())
			h.ServeHTTP(rec, req)
		})
	}
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	require.NoError(t, err)
	without := allocs()
	with := allocs(httplimit.WithObserver(obs))
	assert.Equal(t, without, with, "allocations per request without and with the observer")
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		if labels(m)["outcome"] == "allowed" {
			assert.GreaterOrEqual(t, m.GetCounter().GetValue(), 1000.0, "the observer saw the requests")
		}
	}
}

// TestLabelsComeFromConfiguration sends requests that pick tiers by a header
// a client controls, are skipped, or have no key: the policy label only ever
// names a configured tier, and no request data reaches a label.
func TestLabelsComeFromConfiguration(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(100), core.WithClock(core.NewManualClock(epoch)))
	require.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerMinute(1000))
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	require.NoError(t, err)
	plan, err := keyfuncs.Header("X-Plan")
	require.NoError(t, err)
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs),
		httplimit.WithTiers(plan, paid),
		httplimit.WithLogger(slog.New(slog.DiscardHandler)),
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	send := func(path, remote, plan string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Plan", plan)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	send("/", "192.0.2.1:1", "paid")
	send("/", "192.0.2.2:1", "paid")
	for i := range 20 {
		send("/", "192.0.2.3:1", fmt.Sprint("plan-", i)) // unknown plans: the default tier
	}
	send("/healthz", "192.0.2.4:1", "paid")
	send("/", "not-an-address", "paid")

	got := map[string]float64{}
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		l := labels(m)
		if v := m.GetCounter().GetValue(); v != 0 {
			got[l["policy"]+" "+l["outcome"]] = v
		}
		assert.Contains(t, []string{"default", "paid"}, l["policy"])
	}
	assert.Equal(t, map[string]float64{"paid allowed": 2, "default allowed": 20, "default skipped": 1, "default key_error": 1}, got)
}

// remote is a store that, as Redis, does not decide in process, so the policy
// times its calls (it does not time the memory store's: see
// httplimit.Event.StoreLatency).
type remote struct{ st *memory.Store }

func (r remote) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	return r.st.Take(ctx, req)
}
