package prommetrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// breakerValue reads the breaker_open gauge of policy.
func breakerValue(t *testing.T, reg prometheus.Gatherer, policy string) float64 {
	t.Helper()
	for _, m := range family(t, reg, "ratewarden_breaker_open").GetMetric() {
		if labels(m)["policy"] == policy {
			return m.GetGauge().GetValue()
		}
	}
	require.Failf(t, "no breaker_open series", "policy %q", policy)
	return 0
}

// The gauge follows the events: 1 from a breaker_open decision, 0 again
// from one the store decided; a failure in between changes nothing, and the
// open breaker's refusals are not store errors (no store call was made).
func TestBreakerGaugeFollowsTheEvents(t *testing.T) {
	obs, reg := newObserver(t)
	steps := []struct {
		outcome httplimit.Outcome
		want    float64
	}{
		{httplimit.OutcomeAllowed, 0},
		{httplimit.OutcomeFailedOpen, 0},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeFailedOpen, 1}, // a failed probe
		{httplimit.OutcomeKeyError, 1},
		{httplimit.OutcomeSkipped, 1},
		{httplimit.OutcomeDenied, 0},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeDryRunDenied, 0},
	}
	for i, s := range steps {
		var err error
		switch s.outcome {
		case httplimit.OutcomeFailedOpen:
			err = errStore
		case httplimit.OutcomeBreakerOpen:
			err = core.ErrBreakerOpen
		}
		obs.Observe(httplimit.Event{Outcome: s.outcome, Policy: "api", Err: err})
		require.Equal(t, s.want, breakerValue(t, reg, "api"), "step %d: %s", i, s.outcome)
	}
	errs := family(t, reg, "ratewarden_store_errors_total").GetMetric()
	require.Len(t, errs, 1)
	assert.Equal(t, 2.0, errs[0].GetCounter().GetValue(), "the two failures, not the refusals")
	assert.Equal(t, 1, testutil.CollectAndCount(obs, "ratewarden_breaker_open"), "one series per policy, never per key")
}

// Decisions racing from both sides leave the gauge where the last one put
// it.
func TestBreakerGaugeUnderConcurrency(t *testing.T) {
	obs, reg := newObserver(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 1000 {
				oc := httplimit.OutcomeAllowed
				if (i+j)%2 == 0 {
					oc = httplimit.OutcomeBreakerOpen
				}
				obs.Observe(httplimit.Event{Outcome: oc, Policy: "api"})
			}
		})
	}
	wg.Wait()
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeBreakerOpen, Policy: "api"})
	assert.Equal(t, 1.0, breakerValue(t, reg, "api"))
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "api"})
	assert.Equal(t, 0.0, breakerValue(t, reg, "api"))
}

// switchable is a memory store behind a switch, not in process as far as
// the policy knows (it times it, as it times Redis).
type switchable struct {
	st   *memory.Store
	down atomic.Bool
}

var errRefused = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func (s *switchable) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if s.down.Load() {
		return core.Decision{}, errRefused
	}
	return s.st.Take(ctx, req)
}

// Through the middleware, with the Prometheus observer set: an outage is
// logged (the observer does not silence it), the breaker opens and the
// gauge says so, and both go back when the store does.
func TestBreakerThroughMiddlewareWithTheObserver(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	sw := &switchable{st: st}
	clk := core.NewManualClock(epoch)
	b := core.BreakerConfig{Failures: 2, MinOpen: time.Second, MaxOpen: 4 * time.Second}
	lim, err := core.NewLimiter(sw, core.FixedWindow, core.PerMinute(100), core.WithClock(clk), core.WithBreaker(b))
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	require.NoError(t, err)
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs), httplimit.WithLogger(logger))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	assert.Equal(t, 200, serve(h, "192.0.2.1:1234"))
	assert.Equal(t, 0.0, breakerValue(t, reg, "default"))
	sw.down.Store(true)
	for range 10 {
		assert.Equal(t, 200, serve(h, "192.0.2.1:1234"), "fail open")
	}
	assert.Equal(t, 1.0, breakerValue(t, reg, "default"))
	log := buf.String()
	assert.Contains(t, log, `level=ERROR msg="ratewarden: rate limiter failed; requests pass unlimited (fail open)" policy=default err="dial tcp 10.0.0.7:6379: connection refused"`)
	assert.Contains(t, log, `msg="ratewarden: the store failed repeatedly; its circuit breaker is open`)
	assert.Equal(t, 2, strings.Count(log, "\n"), "one line each, not one per request")

	sw.down.Store(false)
	clk.Advance(time.Second)
	assert.Equal(t, 200, serve(h, "192.0.2.1:1234"))
	assert.Equal(t, 0.0, breakerValue(t, reg, "default"))
	assert.Contains(t, buf.String(), `msg="ratewarden: the store answers again; its circuit breaker is closed and the limiter decides exactly" policy=default`)

	got := map[string]float64{}
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		if v := m.GetCounter().GetValue(); v != 0 {
			got[labels(m)["outcome"]] = v
		}
	}
	assert.Equal(t, map[string]float64{"allowed": 2, "failed_open": 2, "breaker_open": 8}, got)
}

// Without the breaker, an outage with the Prometheus observer set still
// writes its one throttled line, and WithoutStoreErrorLog silences it.
func TestFailOpenLogStaysWithTheObserver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []httplimit.Option
		lines int
	}{
		{"observer", nil, 1},
		{"observer, log off", []httplimit.Option{httplimit.WithoutStoreErrorLog()}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := memory.New()
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			sw := &switchable{st: st}
			sw.down.Store(true)
			lim, err := core.NewLimiter(sw, core.GCRA, core.PerMinute(100), core.WithoutBreaker())
			require.NoError(t, err)
			obs, err := prommetrics.New(prometheus.NewRegistry())
			require.NoError(t, err)
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, nil))
			mw, err := stdhttp.New(lim, append([]httplimit.Option{httplimit.WithObserver(obs), httplimit.WithLogger(logger)}, tc.opts...)...)
			require.NoError(t, err)
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			for range 50 {
				assert.Equal(t, 200, serve(h, "192.0.2.1:1234"))
			}
			assert.Equal(t, tc.lines, strings.Count(buf.String(), "ratewarden: rate limiter failed; requests pass unlimited (fail open)"))
		})
	}
}

// dropTime leaves the time out of a log line.
func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
