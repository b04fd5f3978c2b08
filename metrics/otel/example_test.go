package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line use: an observer on the middleware. An application passes
// its own MeterProvider (or otel.GetMeterProvider()); here the SDK's manual
// reader shows what was recorded.
func ExampleNew() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	obs, err := otelmetrics.New(provider)
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	if err != nil {
		panic(err)
	}
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	for range 3 {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:4321"
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range data.DataPoints {
				outcome, _ := p.Attributes.Value(otelmetrics.AttrOutcome)
				policy, _ := p.Attributes.Value(otelmetrics.AttrPolicy)
				fmt.Printf("%s %s %s: %d\n", m.Name, policy.AsString(), outcome.AsString(), p.Value)
			}
		case metricdata.Histogram[float64]:
			fmt.Printf("%s (%s): %d timed\n", m.Name, m.Unit, data.DataPoints[0].Count)
		}
	}
	// Unordered output:
	// ratewarden.decisions default allowed: 2
	// ratewarden.decisions default denied: 1
}

// A memory store's keys and evictions, observed at each collection: here a
// store bounded to 3 keys sees 5 clients.
func ExampleRegisterMemoryStore() {
	st, err := memory.New(memory.WithMaxKeys(3), memory.WithShards(1))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	if _, err := otelmetrics.RegisterMemoryStore(provider, st); err != nil {
		panic(err)
	}

	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	for _, client := range []string{"a", "b", "c", "d", "e"} {
		if _, err := lim.Allow(context.Background(), client); err != nil {
			panic(err)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		fmt.Printf("%s %s: %d\n", m.Name, m.Unit, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
	}
	// Unordered output:
	// ratewarden.memory_store.keys {key}: 3
	// ratewarden.memory_store.evictions {eviction}: 2
}
