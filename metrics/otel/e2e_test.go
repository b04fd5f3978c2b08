package otelmetrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
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
// a memory store, then reads the SDK's manual reader.
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
			obs, reader := newObserver(t)
			mw, err := stdhttp.New(lim, append(tt.opts, httplimit.WithObserver(obs))...)
			require.NoError(t, err)
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

			for _, want := range []int{200, 200, 429} {
				assert.Equal(t, want, serve(h, "192.0.2.1:1234"))
			}
			require.NoError(t, st.Close())
			assert.Equal(t, tt.wantFailed, serve(h, "192.0.2.1:1234"))

			assert.Equal(t, map[string]int64{
				key("default", "allowed"): 2, key("default", "denied"): 1, key("default", tt.outcome): 1,
			}, sums(t, collect(t, reader, "ratewarden.decisions")))
			duration := collect(t, reader, "ratewarden.store.duration").Data.(metricdata.Histogram[float64])
			require.Len(t, duration.DataPoints, 1)
			assert.Equal(t, uint64(4), duration.DataPoints[0].Count, "every store call timed, the failed one too")
			assert.Greater(t, duration.DataPoints[0].Sum, 0.0)
			assert.Equal(t, map[string]int64{key("default"): 1}, sums(t, collect(t, reader, "ratewarden.store.errors")))
		})
	}
}

// TestObserverAddsNoAllocationPerRequest compares a request through the
// middleware with and without the observer, on the SDK: the observer adds
// nothing.
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
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := otelmetrics.New(mp)
	require.NoError(t, err)
	without := allocs()
	with := allocs(httplimit.WithObserver(obs))
	assert.Equal(t, without, with, "allocations per request without and with the observer")
	assert.GreaterOrEqual(t, sums(t, collect(t, reader, "ratewarden.decisions"))[key("default", "allowed")], int64(1000))
}

// TestAttributesComeFromConfiguration sends requests that pick tiers by a
// header a client controls, under a dry run, skipped, or with no key: the
// policy attribute only ever names a configured tier.
func TestAttributesComeFromConfiguration(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(1), core.WithClock(core.NewManualClock(epoch)))
	require.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerMinute(1000))
	require.NoError(t, err)
	plan, err := keyfuncs.Header("X-Plan")
	require.NoError(t, err)
	obs, reader := newObserver(t)
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs), httplimit.WithDryRun(),
		httplimit.WithTiers(plan, paid),
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }),
		httplimit.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	send := func(path, remote, plan string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Plan", plan)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	assert.Equal(t, http.StatusOK, send("/", "192.0.2.1:1", "paid"))
	for i := range 5 {
		// unknown plans get the default tier, 1 a minute: a dry run lets the rest pass
		assert.Equal(t, http.StatusOK, send("/", "192.0.2.3:1", fmt.Sprint("plan-", i)))
	}
	send("/healthz", "192.0.2.4:1", "paid")
	send("/", "not-an-address", "paid")

	assert.Equal(t, map[string]int64{
		key("paid", "allowed"):           1,
		key("default", "allowed"):        1,
		key("default", "dry_run_denied"): 4,
		key("default", "skipped"):        1,
		key("default", "key_error"):      1,
	}, sums(t, collect(t, reader, "ratewarden.decisions")))
}

// remote is a store that, as Redis, does not decide in process, so the policy
// times its calls (it does not time the memory store's: see
// httplimit.Event.StoreLatency).
type remote struct{ st *memory.Store }

func (r remote) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	return r.st.Take(ctx, req)
}
