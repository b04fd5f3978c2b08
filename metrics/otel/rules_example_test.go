package otelmetrics_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
)

// Given to a rules.Set (rules.WithObserver(obs)), the observer hears of every
// document that takes effect, and reports its version under its short
// digest: one point, replaced on every reload.
func ExampleObserver_ObserveRules() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := otelmetrics.New(mp)
	if err != nil {
		panic(err)
	}
	obs.ObserveRules(7, "3f2a9c1b7e04d8a1c6f95b2e0d7a4c3b9e8f1a2b3c4d5e6f708192a3b4c5d6e7") // what a Set calls
	obs.ObserveRules(8, "9b9ee9f885b80dffd2ff0e6f0971c83da8f23cc4f454423c6a86d77ebb4885d1") // a reload
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "ratewarden.rules.version" {
				for _, p := range g.DataPoints {
					d, _ := p.Attributes.Value(otelmetrics.AttrRulesDigest)
					fmt.Println(m.Name, d.AsString(), p.Value)
				}
			}
		}
	}
	// Output: ratewarden.rules.version 9b9ee9f885b8 8
}
