package otelmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
)

var errStore = errors.New("store down")

func newObserver(t testing.TB, opts ...otelmetrics.Option) (*otelmetrics.Observer, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	obs, err := otelmetrics.New(mp, opts...)
	require.NoError(t, err)
	return obs, reader
}

// collect reads reader and returns the instrument called name, with the
// scope it came from.
func collect(t *testing.T, reader sdkmetric.Reader, name string) metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				assert.Equal(t, otelmetrics.ScopeName, sm.Scope.Name)
				return m
			}
		}
	}
	require.Failf(t, "instrument not collected", "%s", name)
	return metricdata.Metrics{}
}

// sums returns the int64 sum's points by their attributes' encoding.
func sums(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	data, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T", m.Name, m.Data)
	out := map[string]int64{}
	for _, p := range data.DataPoints {
		out[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
	}
	return out
}

func key(policy string, outcome ...string) string {
	kvs := []attribute.KeyValue{otelmetrics.AttrPolicy.String(policy)}
	for _, o := range outcome {
		kvs = append(kvs, otelmetrics.AttrOutcome.String(o))
	}
	set := attribute.NewSet(kvs...)
	return set.Encoded(attribute.DefaultEncoder())
}

func TestObserveCountsEveryOutcome(t *testing.T) {
	for _, out := range httplimit.Outcomes() {
		t.Run(out.String(), func(t *testing.T) {
			obs, reader := newObserver(t)
			obs.Observe(httplimit.Event{Outcome: out, Policy: "api"})
			obs.Observe(httplimit.Event{Outcome: out, Policy: "api"})
			m := collect(t, reader, "ratewarden.decisions")
			assert.Equal(t, "{decision}", m.Unit)
			data := m.Data.(metricdata.Sum[int64])
			assert.True(t, data.IsMonotonic)
			assert.Equal(t, map[string]int64{key("api", out.String()): 2}, sums(t, m))
		})
	}
}

func TestObserveUnknownOutcome(t *testing.T) {
	obs, reader := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.Outcome(200), Policy: "api"})
	obs.Observe(httplimit.Event{Policy: "api"})
	assert.Equal(t, map[string]int64{key("api", "unknown"): 2}, sums(t, collect(t, reader, "ratewarden.decisions")))
}

func TestObserveDurationInSeconds(t *testing.T) {
	tests := []struct {
		name      string
		latencies []time.Duration
		wantCount uint64
		wantSum   float64
		wantBelow map[float64]uint64 // a bucket's upper bound -> count in that bucket alone
	}{
		{"memory store", []time.Duration{100 * time.Nanosecond, 300 * time.Nanosecond}, 2, 400e-9,
			map[float64]uint64{0.00005: 2, 0.0001: 0}},
		{"redis", []time.Duration{200 * time.Microsecond, 1500 * time.Microsecond, 2 * time.Millisecond}, 3, 0.0037,
			map[float64]uint64{0.00025: 1, 0.0025: 2}},
		{"timeout", []time.Duration{100 * time.Millisecond, 2 * time.Second}, 2, 2.1,
			map[float64]uint64{0.1: 1, math.Inf(1): 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, reader := newObserver(t)
			for _, d := range tt.latencies {
				obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: d})
			}
			m := collect(t, reader, "ratewarden.store.duration")
			assert.Equal(t, "s", m.Unit)
			data, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "%T", m.Data)
			require.Len(t, data.DataPoints, 1)
			p := data.DataPoints[0]
			assert.Equal(t, attribute.NewSet(otelmetrics.AttrPolicy.String("api")), p.Attributes)
			assert.Equal(t, otelmetrics.DefaultBuckets(), p.Bounds)
			assert.Equal(t, tt.wantCount, p.Count)
			assert.InDelta(t, tt.wantSum, p.Sum, 1e-12)
			for bound, want := range tt.wantBelow {
				i := len(p.Bounds) // the +Inf bucket
				for j, b := range p.Bounds {
					if b == bound {
						i = j
					}
				}
				assert.Equal(t, want, p.BucketCounts[i], "bucket le=%v", bound)
			}
		})
	}
}

func TestObserveNoStoreCallRecordsNoDuration(t *testing.T) {
	obs, reader := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeSkipped, Policy: "api"})
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			assert.NotEqual(t, "ratewarden.store.duration", m.Name)
		}
	}
}

func TestObserveStoreErrors(t *testing.T) {
	tests := []struct {
		outcome httplimit.Outcome
		err     error
		want    map[string]int64
	}{
		{httplimit.OutcomeFailedOpen, errStore, map[string]int64{key("login"): 1}},
		{httplimit.OutcomeFailedClosed, errStore, map[string]int64{key("login"): 1}},
		{httplimit.OutcomeRefunded, errStore, map[string]int64{key("login"): 1}},
		{httplimit.OutcomeKeyError, errors.New("no key"), nil},
		{httplimit.OutcomeAllowed, nil, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.outcome, tt.err), func(t *testing.T) {
			obs, reader := newObserver(t)
			obs.Observe(httplimit.Event{Outcome: tt.outcome, Policy: "login", Err: tt.err})
			obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "login"})
			if tt.want == nil {
				var rm metricdata.ResourceMetrics
				require.NoError(t, reader.Collect(context.Background(), &rm))
				for _, m := range rm.ScopeMetrics[0].Metrics {
					assert.NotEqual(t, "ratewarden.store.errors", m.Name)
				}
				return
			}
			m := collect(t, reader, "ratewarden.store.errors")
			assert.Equal(t, "{error}", m.Unit)
			assert.Equal(t, tt.want, sums(t, m))
		})
	}
}

func TestCardinalityBound(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		policies []string
		want     map[string]int64
	}{
		{"under the bound", 3, []string{"a", "b", "a"}, map[string]int64{"a": 2, "b": 1}},
		{"past the bound", 2, []string{"a", "b", "c", "d", "a", "c"}, map[string]int64{"a": 2, "b": 1, otelmetrics.OverflowPolicy: 3}},
		{"bound of one", 1, []string{"a", "b", "c"}, map[string]int64{"a": 1, otelmetrics.OverflowPolicy: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, reader := newObserver(t, otelmetrics.WithMaxPolicies(tt.max))
			for _, p := range tt.policies {
				obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: p})
			}
			want := map[string]int64{}
			for p, n := range tt.want {
				want[key(p, "allowed")] = n
			}
			assert.Equal(t, want, sums(t, collect(t, reader, "ratewarden.decisions")))
		})
	}
}

func TestDefaultCardinalityBound(t *testing.T) {
	obs, reader := newObserver(t)
	for i := range 10 * otelmetrics.DefaultMaxPolicies {
		obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeDenied, Policy: fmt.Sprint("user-", i)})
	}
	got := sums(t, collect(t, reader, "ratewarden.decisions"))
	assert.Len(t, got, otelmetrics.DefaultMaxPolicies+1)
	assert.Equal(t, int64(9*otelmetrics.DefaultMaxPolicies), got[key(otelmetrics.OverflowPolicy, "denied")])
}

func TestObserveConcurrently(t *testing.T) {
	obs, reader := newObserver(t, otelmetrics.WithMaxPolicies(4))
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: fmt.Sprint("p", (w+i)%6)})
			}
		})
	}
	wg.Wait()
	got := sums(t, collect(t, reader, "ratewarden.decisions"))
	var total int64
	for _, n := range got {
		total += n
	}
	assert.Equal(t, int64(workers*each), total)
	assert.Len(t, got, 5, "four policies and the overflow")
}

func TestWithAttributes(t *testing.T) {
	obs, reader := newObserver(t, otelmetrics.WithAttributes(attribute.String("app", "shop")), otelmetrics.WithAttributes(attribute.Int("shard", 2)))
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedOpen, Policy: "api", StoreLatency: time.Millisecond, Err: errStore})
	want := attribute.NewSet(attribute.String("app", "shop"), attribute.Int("shard", 2), otelmetrics.AttrPolicy.String("api"))
	errs := collect(t, reader, "ratewarden.store.errors").Data.(metricdata.Sum[int64])
	require.Len(t, errs.DataPoints, 1)
	assert.Equal(t, want, errs.DataPoints[0].Attributes)
	decisions := collect(t, reader, "ratewarden.decisions").Data.(metricdata.Sum[int64])
	require.Len(t, decisions.DataPoints, 1)
	v, ok := decisions.DataPoints[0].Attributes.Value("app")
	assert.True(t, ok)
	assert.Equal(t, "shop", v.AsString())
}

func TestObserveAllocatesNothing(t *testing.T) {
	providers := map[string]metric.MeterProvider{
		"sdk":  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		"noop": noop.NewMeterProvider(),
	}
	events := []httplimit.Event{
		{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: 120 * time.Nanosecond},
		{Outcome: httplimit.OutcomeDenied, Policy: "login", StoreLatency: time.Millisecond},
		{Outcome: httplimit.OutcomeFailedOpen, Policy: "api", StoreLatency: 100 * time.Millisecond, Err: errStore},
	}
	for name, mp := range providers {
		t.Run(name, func(t *testing.T) {
			obs, err := otelmetrics.New(mp)
			require.NoError(t, err)
			for _, e := range events {
				obs.Observe(e) // the first sight of a policy builds its sets, and the SDK its series
			}
			for _, e := range events {
				allocs := testing.AllocsPerRun(1000, func() { obs.Observe(e) })
				assert.Equal(t, 0.0, allocs, "%s/%s", e.Policy, e.Outcome)
			}
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	mp := noop.NewMeterProvider()
	tests := []struct {
		name string
		mp   metric.MeterProvider
		opts []otelmetrics.Option
	}{
		{"nil provider", nil, nil},
		{"nil option", mp, []otelmetrics.Option{nil}},
		{"no buckets", mp, []otelmetrics.Option{otelmetrics.WithBuckets()}},
		{"zero bucket", mp, []otelmetrics.Option{otelmetrics.WithBuckets(0, 1)}},
		{"negative bucket", mp, []otelmetrics.Option{otelmetrics.WithBuckets(-1)}},
		{"NaN bucket", mp, []otelmetrics.Option{otelmetrics.WithBuckets(math.NaN())}},
		{"infinite bucket", mp, []otelmetrics.Option{otelmetrics.WithBuckets(0.1, math.Inf(1))}},
		{"decreasing buckets", mp, []otelmetrics.Option{otelmetrics.WithBuckets(0.1, 0.01)}},
		{"repeated bucket", mp, []otelmetrics.Option{otelmetrics.WithBuckets(0.1, 0.1)}},
		{"empty attribute key", mp, []otelmetrics.Option{otelmetrics.WithAttributes(attribute.String("", "x"))}},
		{"attribute policy", mp, []otelmetrics.Option{otelmetrics.WithAttributes(otelmetrics.AttrPolicy.String("x"))}},
		{"attribute outcome", mp, []otelmetrics.Option{otelmetrics.WithAttributes(otelmetrics.AttrOutcome.String("x"))}},
		{"attribute rules digest", mp, []otelmetrics.Option{otelmetrics.WithAttributes(otelmetrics.AttrRulesDigest.String("x"))}},
		{"zero max policies", mp, []otelmetrics.Option{otelmetrics.WithMaxPolicies(0)}},
		{"negative max policies", mp, []otelmetrics.Option{otelmetrics.WithMaxPolicies(-1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obs *otelmetrics.Observer
			var err error
			require.NotPanics(t, func() { obs, err = otelmetrics.New(tt.mp, tt.opts...) })
			require.ErrorIs(t, err, otelmetrics.ErrInvalid)
			assert.Nil(t, obs)
		})
	}
}

func BenchmarkObserve(b *testing.B) {
	obs, _ := newObserver(b)
	e := httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: 150 * time.Nanosecond}
	obs.Observe(e)
	b.ReportAllocs()
	for b.Loop() {
		obs.Observe(e)
	}
}
