package otelmetrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// gauges returns the int64 gauge's points by their attributes' encoding.
func gauges(t *testing.T, reader sdkmetric.Reader) map[string]int64 {
	t.Helper()
	m := collect(t, reader, "ratewarden.breaker.open")
	data, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is %T", m.Name, m.Data)
	out := map[string]int64{}
	for _, p := range data.DataPoints {
		out[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
	}
	return out
}

// The gauge follows the events: 0 from a policy's first decision, 1 from a
// breaker_open one, 0 again from one the store decided; a failure in
// between changes nothing, and the open breaker's refusals are not store
// errors.
func TestBreakerGaugeFollowsTheEvents(t *testing.T) {
	obs, reader := newObserver(t)
	steps := []struct {
		outcome httplimit.Outcome
		want    int64
	}{
		{httplimit.OutcomeAllowed, 0},
		{httplimit.OutcomeFailedOpen, 0},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeFailedClosed, 1}, // a failed probe
		{httplimit.OutcomeSkipped, 1},
		{httplimit.OutcomeDenied, 0},
		{httplimit.OutcomeBreakerOpen, 1},
		{httplimit.OutcomeDryRunDenied, 0},
	}
	for i, s := range steps {
		var err error
		switch s.outcome {
		case httplimit.OutcomeFailedOpen, httplimit.OutcomeFailedClosed:
			err = errStore
		case httplimit.OutcomeBreakerOpen:
			err = core.ErrBreakerOpen
		}
		obs.Observe(httplimit.Event{Outcome: s.outcome, Policy: "api", Err: err})
		require.Equal(t, map[string]int64{key("api"): s.want}, gauges(t, reader), "step %d: %s", i, s.outcome)
	}
	assert.Equal(t, map[string]int64{key("api"): 2}, sums(t, collect(t, reader, "ratewarden.store.errors")), "the two failures, not the refusals")
}

// switchable is a memory store behind a switch, timed by the policy as a
// network store.
type switchable struct {
	st   *memory.Store
	down atomic.Bool
}

func (s *switchable) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if s.down.Load() {
		return core.Decision{}, errors.New("dial tcp 10.0.0.7:6379: connection refused")
	}
	return s.st.Take(ctx, req)
}

// Through the middleware with the OpenTelemetry observer: the outage is
// logged, the gauge goes to 1 when the breaker opens and back to 0 when the
// probe finds the store.
func TestBreakerThroughMiddleware(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	sw := &switchable{st: st}
	clk := core.NewManualClock(epoch)
	b := core.BreakerConfig{Failures: 2, MinOpen: time.Second, MaxOpen: 4 * time.Second}
	lim, err := core.NewLimiter(sw, core.FixedWindow, core.PerMinute(100), core.WithClock(clk), core.WithBreaker(b))
	require.NoError(t, err)
	obs, reader := newObserver(t)
	var buf bytes.Buffer
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs), httplimit.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func() int { return serve(h, "192.0.2.1:1234") }

	assert.Equal(t, 200, send())
	sw.down.Store(true)
	for range 6 {
		assert.Equal(t, 200, send())
	}
	assert.Equal(t, map[string]int64{key("default"): 1}, gauges(t, reader))
	assert.Contains(t, buf.String(), "ratewarden: rate limiter failed; requests pass unlimited (fail open)")
	assert.Contains(t, buf.String(), "its circuit breaker is open")
	assert.Equal(t, 2, strings.Count(buf.String(), "\n"))
	sw.down.Store(false)
	clk.Advance(time.Second)
	assert.Equal(t, 200, send())
	assert.Equal(t, map[string]int64{key("default"): 0}, gauges(t, reader))
	assert.Contains(t, buf.String(), "its circuit breaker is closed")
	assert.Equal(t, map[string]int64{
		key("default", "allowed"): 2, key("default", "failed_open"): 2, key("default", "breaker_open"): 4,
	}, nonZero(sums(t, collect(t, reader, "ratewarden.decisions"))))
}

func nonZero(m map[string]int64) map[string]int64 {
	for k, v := range m {
		if v == 0 {
			delete(m, k)
		}
	}
	return m
}
