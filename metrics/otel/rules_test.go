package otelmetrics_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
)

// rulesPoints collects the ratewarden.rules.version points: digest -> value,
// with the attributes besides the digest checked against want.
func rulesPoints(t *testing.T, reader sdkmetric.Reader, want ...attribute.KeyValue) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "ratewarden.rules.version" {
				continue
			}
			g, ok := m.Data.(metricdata.Gauge[int64])
			require.True(t, ok, "%T", m.Data)
			for _, p := range g.DataPoints {
				d, _ := p.Attributes.Value(otelmetrics.AttrRulesDigest)
				for _, kv := range want {
					v, ok := p.Attributes.Value(kv.Key)
					assert.True(t, ok && v == kv.Value, "attribute %s", kv.Key)
				}
				assert.Equal(t, len(want)+1, p.Attributes.Len())
				out[d.AsString()] = p.Value
			}
		}
	}
	return out
}

// The gauge reports nothing until a document is heard of, then one point:
// the version, under the short digest; a reload replaces it.
func TestRulesVersionGauge(t *testing.T) {
	app := attribute.String("app", "shop")
	obs, reader := newObserver(t, otelmetrics.WithAttributes(app))
	assert.Empty(t, rulesPoints(t, reader, app))
	d11 := strings.Repeat("3f2a9c1b7e04", 5) + "abcd"
	obs.ObserveRules(11, d11)
	assert.Equal(t, map[string]int64{"3f2a9c1b7e04": 11}, rulesPoints(t, reader, app))
	obs.ObserveRules(12, strings.Repeat("0", 64))
	assert.Equal(t, map[string]int64{"000000000000": 12}, rulesPoints(t, reader, app), "the old point is gone")
	obs.ObserveRules(11, d11)
	assert.Equal(t, map[string]int64{"3f2a9c1b7e04": 11}, rulesPoints(t, reader, app), "a downgrade too")
}

// Whatever a caller passes, the gauge reports: a short or empty digest is
// kept whole, invalid UTF-8 is replaced, and concurrent reloads leave one point.
func TestRulesVersionGaugeBadInput(t *testing.T) {
	obs, reader := newObserver(t)
	obs.ObserveRules(1, "")
	assert.Equal(t, map[string]int64{"": 1}, rulesPoints(t, reader))
	obs.ObserveRules(2, "\xff\xfe")
	assert.Equal(t, map[string]int64{"\uFFFD": 2}, rulesPoints(t, reader))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for v := range 100 {
				obs.ObserveRules(int64(i*100+v), strings.Repeat("a", 64))
			}
		})
	}
	for range 20 {
		assert.Len(t, rulesPoints(t, reader), 1)
	}
	wg.Wait()
}
