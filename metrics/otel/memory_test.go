package otelmetrics_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
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

func newProvider(t *testing.T) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, reader
}

func TestRegisterMemoryStore(t *testing.T) {
	tests := []struct {
		name          string
		maxKeys, keys int
		wantKeys      int64
		wantEvictions int64
	}{
		{"empty", 10, 0, 0, 0},
		{"under the bound", 10, 7, 7, 0},
		{"at the bound", 10, 10, 10, 0},
		{"past the bound", 10, 25, 10, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemoryStore(t, tt.maxKeys)
			mp, reader := newProvider(t)
			_, err := otelmetrics.RegisterMemoryStore(mp, st)
			require.NoError(t, err)
			fill(t, st, 0, tt.keys)

			keys := collect(t, reader, "ratewarden.memory_store.keys")
			assert.Equal(t, "{key}", keys.Unit)
			assert.False(t, keys.Data.(metricdata.Sum[int64]).IsMonotonic, "an up-down counter")
			assert.Equal(t, map[string]int64{"": tt.wantKeys}, sums(t, keys))
			evictions := collect(t, reader, "ratewarden.memory_store.evictions")
			assert.Equal(t, "{eviction}", evictions.Unit)
			assert.True(t, evictions.Data.(metricdata.Sum[int64]).IsMonotonic)
			assert.Equal(t, map[string]int64{"": tt.wantEvictions}, sums(t, evictions))
		})
	}
}

func TestRegisterMemoryStoreTwoStores(t *testing.T) {
	mp, reader := newProvider(t)
	sessions, api := newMemoryStore(t, 4), newMemoryStore(t, 100)
	_, err := otelmetrics.RegisterMemoryStore(mp, sessions, otelmetrics.WithAttributes(attribute.String("store", "sessions")))
	require.NoError(t, err)
	reg, err := otelmetrics.RegisterMemoryStore(mp, api, otelmetrics.WithAttributes(attribute.String("store", "api")))
	require.NoError(t, err)
	fill(t, sessions, 0, 6)
	fill(t, api, 0, 6)

	encoded := func(store string) string {
		set := attribute.NewSet(attribute.String("store", store))
		return set.Encoded(attribute.DefaultEncoder())
	}
	assert.Equal(t, map[string]int64{encoded("sessions"): 4, encoded("api"): 6}, sums(t, collect(t, reader, "ratewarden.memory_store.keys")))
	assert.Equal(t, map[string]int64{encoded("sessions"): 2, encoded("api"): 0}, sums(t, collect(t, reader, "ratewarden.memory_store.evictions")))

	require.NoError(t, reg.Unregister())
	fill(t, sessions, 6, 1)
	assert.Equal(t, map[string]int64{encoded("sessions"): 3}, sums(t, collect(t, reader, "ratewarden.memory_store.evictions")),
		"an unregistered store is no longer observed")
}

func TestRegisterMemoryStoreRejectsBadInput(t *testing.T) {
	st := newMemoryStore(t, 10)
	mp := noop.NewMeterProvider()
	tests := []struct {
		name string
		mp   metric.MeterProvider
		st   *memory.Store
		opts []otelmetrics.Option
	}{
		{"nil provider", nil, st, nil},
		{"nil store", mp, nil, nil},
		{"nil option", mp, st, []otelmetrics.Option{nil}},
		{"empty attribute key", mp, st, []otelmetrics.Option{otelmetrics.WithAttributes(attribute.Int("", 1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg metric.Registration
			var err error
			require.NotPanics(t, func() { reg, err = otelmetrics.RegisterMemoryStore(tt.mp, tt.st, tt.opts...) })
			require.ErrorIs(t, err, otelmetrics.ErrInvalid)
			assert.Nil(t, reg)
		})
	}
}
