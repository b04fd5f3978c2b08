package prommetrics_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
)

var errStore = errors.New("store down")

func newObserver(t testing.TB, opts ...prommetrics.Option) (*prommetrics.Observer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg, opts...)
	require.NoError(t, err)
	return obs, reg
}

// family gathers reg and returns the metric family called name.
func family(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	require.Failf(t, "metric family not gathered", "%s", name)
	return nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestObserveCountsEveryOutcome(t *testing.T) {
	for _, out := range httplimit.Outcomes() {
		t.Run(out.String(), func(t *testing.T) {
			obs, _ := newObserver(t)
			obs.Observe(httplimit.Event{Outcome: out, Policy: "api"})
			obs.Observe(httplimit.Event{Outcome: out, Policy: "api"})

			var want strings.Builder
			want.WriteString("# HELP ratewarden_decisions_total Rate-limit decisions, by policy and outcome (allowed, denied, dry_run_denied, failed_open, failed_closed, key_error, skipped, refunded, store_full, breaker_open).\n")
			want.WriteString("# TYPE ratewarden_decisions_total counter\n")
			for _, o := range httplimit.Outcomes() {
				n := 0
				if o == out {
					n = 2
				}
				fmt.Fprintf(&want, "ratewarden_decisions_total{outcome=%q,policy=\"api\"} %d\n", o.String(), n)
			}
			require.NoError(t, testutil.CollectAndCompare(obs, strings.NewReader(want.String()), "ratewarden_decisions_total"))
		})
	}
}

func TestObserveUnknownOutcome(t *testing.T) {
	obs, reg := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.Outcome(200), Policy: "api"})
	obs.Observe(httplimit.Event{Policy: "api"}) // the zero Outcome
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		want := 0.0
		if labels(m)["outcome"] == "unknown" {
			want = 2
		}
		assert.Equal(t, want, m.GetCounter().GetValue(), "%v", labels(m))
	}
}

func TestObserveLatencyInSeconds(t *testing.T) {
	tests := []struct {
		name      string
		latencies []time.Duration
		wantCount uint64
		wantSum   float64
		// wantBelow maps a bucket's upper bound to its cumulative count.
		wantBelow map[float64]uint64
	}{
		{"memory store", []time.Duration{100 * time.Nanosecond, 300 * time.Nanosecond}, 2, 400e-9,
			map[float64]uint64{0.00005: 2, 1: 2}},
		{"redis", []time.Duration{200 * time.Microsecond, 1500 * time.Microsecond, 2 * time.Millisecond}, 3, 0.0037,
			map[float64]uint64{0.0001: 0, 0.00025: 1, 0.001: 1, 0.0025: 3}},
		{"timeout", []time.Duration{100 * time.Millisecond, 2 * time.Second}, 2, 2.1,
			map[float64]uint64{0.05: 0, 0.1: 1, 1: 1}},
		{"no store call", []time.Duration{0}, 0, 0, map[float64]uint64{1: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, reg := newObserver(t)
			for _, d := range tt.latencies {
				obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: d})
			}
			metrics := family(t, reg, "ratewarden_store_latency_seconds").GetMetric()
			require.Len(t, metrics, 1)
			assert.Equal(t, map[string]string{"policy": "api"}, labels(metrics[0]))
			h := metrics[0].GetHistogram()
			assert.Equal(t, tt.wantCount, h.GetSampleCount())
			assert.InDelta(t, tt.wantSum, h.GetSampleSum(), 1e-12)
			seen := 0
			for _, b := range h.GetBucket() {
				if want, ok := tt.wantBelow[b.GetUpperBound()]; ok {
					assert.Equal(t, want, b.GetCumulativeCount(), "bucket le=%v", b.GetUpperBound())
					seen++
				}
			}
			assert.Equal(t, len(tt.wantBelow), seen, "buckets checked")
		})
	}
}

func TestObserveStoreErrors(t *testing.T) {
	tests := []struct {
		outcome httplimit.Outcome
		err     error
		want    float64
	}{
		{httplimit.OutcomeFailedOpen, errStore, 1},
		{httplimit.OutcomeFailedClosed, errStore, 1},
		{httplimit.OutcomeRefunded, errStore, 1}, // a refund that failed
		{httplimit.OutcomeRefunded, nil, 0},
		{httplimit.OutcomeKeyError, errors.New("no key"), 0},
		{httplimit.OutcomeAllowed, nil, 0},
		{httplimit.OutcomeDenied, nil, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.outcome, tt.err), func(t *testing.T) {
			obs, _ := newObserver(t)
			obs.Observe(httplimit.Event{Outcome: tt.outcome, Policy: "login", Err: tt.err})
			want := fmt.Sprintf(`# HELP ratewarden_store_errors_total Rate-limit store calls that failed (the request then failed open or closed), and failed refunds, by policy.
# TYPE ratewarden_store_errors_total counter
ratewarden_store_errors_total{policy="login"} %v
`, tt.want)
			require.NoError(t, testutil.CollectAndCompare(obs, strings.NewReader(want), "ratewarden_store_errors_total"))
		})
	}
}

func TestCardinalityBound(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		policies []string
		want     map[string]float64
	}{
		{"under the bound", 3, []string{"a", "b", "a"}, map[string]float64{"a": 2, "b": 1}},
		{"past the bound", 2, []string{"a", "b", "c", "d", "a", "c"},
			map[string]float64{"a": 2, "b": 1, prommetrics.OverflowPolicy: 3}},
		{"bound of one", 1, []string{"a", "b", "c"}, map[string]float64{"a": 1, prommetrics.OverflowPolicy: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, reg := newObserver(t, prommetrics.WithMaxPolicies(tt.max))
			for _, p := range tt.policies {
				obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: p})
			}
			got := map[string]float64{}
			for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
				if l := labels(m); l["outcome"] == "allowed" {
					got[l["policy"]] = m.GetCounter().GetValue()
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDefaultCardinalityBound(t *testing.T) {
	obs, reg := newObserver(t)
	for i := range 10 * prommetrics.DefaultMaxPolicies {
		obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeDenied, Policy: fmt.Sprint("user-", i)})
	}
	series := len(family(t, reg, "ratewarden_decisions_total").GetMetric())
	assert.Equal(t, (prommetrics.DefaultMaxPolicies+1)*len(httplimit.Outcomes()), series)
	assert.Equal(t, prommetrics.DefaultMaxPolicies+1, testutil.CollectAndCount(obs, "ratewarden_store_errors_total"))
}

func TestInvalidUTF8Policy(t *testing.T) {
	obs, reg := newObserver(t)
	require.NotPanics(t, func() {
		obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "bad\xff"})
	})
	found := false
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		if l := labels(m); l["outcome"] == "allowed" {
			assert.Equal(t, "bad\uFFFD", l["policy"])
			found = true
		}
	}
	assert.True(t, found)
}

func TestObserveConcurrently(t *testing.T) {
	obs, reg := newObserver(t, prommetrics.WithMaxPolicies(4))
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
	total, policies := 0.0, map[string]bool{}
	for _, m := range family(t, reg, "ratewarden_decisions_total").GetMetric() {
		total += m.GetCounter().GetValue()
		policies[labels(m)["policy"]] = true
	}
	assert.Equal(t, float64(workers*each), total)
	assert.Len(t, policies, 5, "four policies and the overflow")
}

func TestLint(t *testing.T) {
	obs, reg := newObserver(t)
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedOpen, Policy: "api", StoreLatency: time.Millisecond, Err: errStore})
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestObserveAllocatesNothing(t *testing.T) {
	obs, _ := newObserver(t)
	events := []httplimit.Event{
		{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: 120 * time.Nanosecond},
		{Outcome: httplimit.OutcomeDenied, Policy: "login", StoreLatency: time.Millisecond},
		{Outcome: httplimit.OutcomeFailedOpen, Policy: "api", StoreLatency: 100 * time.Millisecond, Err: errStore},
	}
	for _, e := range events {
		obs.Observe(e) // the first sight of a policy resolves its series
	}
	for _, e := range events {
		allocs := testing.AllocsPerRun(1000, func() { obs.Observe(e) })
		assert.Equal(t, 0.0, allocs, "%s/%s", e.Policy, e.Outcome)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		reg  prometheus.Registerer
		opts []prommetrics.Option
	}{
		{"nil registerer", nil, nil},
		{"nil option", prometheus.NewRegistry(), []prommetrics.Option{nil}},
		{"empty namespace", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithNamespace("")}},
		{"namespace with a dash", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithNamespace("my-app")}},
		{"namespace starting with a digit", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithNamespace("1app")}},
		{"no buckets", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets()}},
		{"zero bucket", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(0, 1)}},
		{"negative bucket", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(-1, 1)}},
		{"NaN bucket", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(math.NaN())}},
		{"infinite bucket", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(0.1, math.Inf(1))}},
		{"decreasing buckets", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(0.1, 0.01)}},
		{"repeated bucket", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithBuckets(0.1, 0.1)}},
		{"const label policy", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"policy": "x"})}},
		{"const label outcome", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"outcome": "x"})}},
		{"const label digest", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"digest": "x"})}},
		{"const label reserved", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"__name__": "x"})}},
		{"const label bad name", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"a-b": "x"})}},
		{"const label bad value", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"store": "\xff"})}},
		{"zero max policies", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithMaxPolicies(0)}},
		{"negative max policies", prometheus.NewRegistry(), []prommetrics.Option{prommetrics.WithMaxPolicies(-5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obs *prommetrics.Observer
			var err error
			require.NotPanics(t, func() { obs, err = prommetrics.New(tt.reg, tt.opts...) })
			require.ErrorIs(t, err, prommetrics.ErrInvalid)
			assert.Nil(t, obs)
		})
	}
}

func TestNewDuplicateRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := prommetrics.New(reg)
	require.NoError(t, err)

	_, err = prommetrics.New(reg)
	var already prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &already)
	assert.Contains(t, err.Error(), "prommetrics: registering")

	// Const labels or a namespace tell two observers apart.
	_, err = prommetrics.New(reg, prommetrics.WithConstLabels(prometheus.Labels{"app": "admin"}))
	assert.Error(t, err, "same names with other const labels are inconsistent in one registry")
	_, err = prommetrics.New(reg, prommetrics.WithNamespace("admin"))
	assert.NoError(t, err)
}

func TestOptionsApply(t *testing.T) {
	obs, reg := newObserver(t,
		prommetrics.WithNamespace("shop"),
		prommetrics.WithBuckets(0.001, 0.01),
		prommetrics.WithConstLabels(prometheus.Labels{"app": "shop"}),
		prommetrics.WithConstLabels(prometheus.Labels{"zone": "eu"}),
	)
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed, Policy: "api", StoreLatency: 5 * time.Millisecond})
	m := family(t, reg, "shop_store_latency_seconds").GetMetric()
	require.Len(t, m, 1)
	assert.Equal(t, map[string]string{"app": "shop", "zone": "eu", "policy": "api"}, labels(m[0]))
	var bounds []float64
	for _, b := range m[0].GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	assert.Equal(t, []float64{0.001, 0.01}, bounds)
	assert.Equal(t, 1, testutil.CollectAndCount(obs, "shop_store_errors_total"))
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
