package prommetrics_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/store/memory"
)

// fill sends one request for each of n keys, named from first on, through a
// limiter on st.
func fill(t *testing.T, st *memory.Store, first, n int) {
	t.Helper()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5), core.WithClock(core.NewManualClock(epoch)))
	require.NoError(t, err)
	for i := first; i < first+n; i++ {
		d, err := lim.Allow(context.Background(), fmt.Sprint("client-", i))
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
}

func newMemoryStore(t *testing.T, maxKeys int) *memory.Store {
	t.Helper()
	st, err := memory.New(memory.WithMaxKeys(maxKeys), memory.WithShards(1), memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestRegisterMemoryStore(t *testing.T) {
	tests := []struct {
		name          string
		maxKeys, keys int
		wantKeys      int
		wantEvictions int
	}{
		{"empty", 10, 0, 0, 0},
		{"under the bound", 10, 7, 7, 0},
		{"at the bound", 10, 10, 10, 0},
		{"past the bound", 10, 25, 10, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemoryStore(t, tt.maxKeys)
			reg := prometheus.NewRegistry()
			c, err := prommetrics.RegisterMemoryStore(reg, st)
			require.NoError(t, err)
			fill(t, st, 0, tt.keys)
			want := fmt.Sprintf(`# HELP ratewarden_memory_store_evictions_total Keys the rate-limit memory store evicted, while their state had not recovered, to make room for new ones.
# TYPE ratewarden_memory_store_evictions_total counter
ratewarden_memory_store_evictions_total %d
# HELP ratewarden_memory_store_keys Keys the rate-limit memory store holds.
# TYPE ratewarden_memory_store_keys gauge
ratewarden_memory_store_keys %d
`, tt.wantEvictions, tt.wantKeys)
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
			require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
			problems, err := testutil.GatherAndLint(reg)
			require.NoError(t, err)
			assert.Empty(t, problems)
		})
	}
}

func TestRegisterMemoryStoreReadsAtScrape(t *testing.T) {
	st := newMemoryStore(t, 4)
	reg := prometheus.NewRegistry()
	_, err := prommetrics.RegisterMemoryStore(reg, st, prommetrics.WithNamespace("shop"),
		prommetrics.WithConstLabels(prometheus.Labels{"store": "sessions"}))
	require.NoError(t, err)
	steps := []struct{ keys, wantKeys, wantEvictions int }{{2, 2, 0}, {6, 4, 4}, {3, 4, 7}}
	first := 0
	for i, step := range steps {
		fill(t, st, first, step.keys) // new clients every step
		first += step.keys
		families, err := reg.Gather()
		require.NoError(t, err)
		got := map[string]float64{}
		for _, f := range families {
			m := f.GetMetric()[0]
			assert.Equal(t, map[string]string{"store": "sessions"}, labels(m))
			got[f.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		assert.Equal(t, map[string]float64{
			"shop_memory_store_keys":            float64(step.wantKeys),
			"shop_memory_store_evictions_total": float64(step.wantEvictions),
		}, got, "after step %d", i)
	}
}

func TestRegisterMemoryStoreRejectsBadInput(t *testing.T) {
	st := newMemoryStore(t, 10)
	tests := []struct {
		name string
		reg  prometheus.Registerer
		st   *memory.Store
		opts []prommetrics.Option
	}{
		{"nil registerer", nil, st, nil},
		{"nil store", prometheus.NewRegistry(), nil, nil},
		{"nil option", prometheus.NewRegistry(), st, []prommetrics.Option{nil}},
		{"bad namespace", prometheus.NewRegistry(), st, []prommetrics.Option{prommetrics.WithNamespace("a b")}},
		{"bad const label", prometheus.NewRegistry(), st, []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"": "x"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c prometheus.Collector
			var err error
			require.NotPanics(t, func() { c, err = prommetrics.RegisterMemoryStore(tt.reg, tt.st, tt.opts...) })
			require.ErrorIs(t, err, prommetrics.ErrInvalid)
			assert.Nil(t, c)
		})
	}

	reg := prometheus.NewRegistry()
	_, err := prommetrics.RegisterMemoryStore(reg, st)
	require.NoError(t, err)
	_, err = prommetrics.RegisterMemoryStore(reg, newMemoryStore(t, 10))
	var already prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &already, "a second store needs a const label of its own")
}
