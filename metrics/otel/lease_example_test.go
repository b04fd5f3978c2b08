package otelmetrics_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// Counters of what each policy's token leases did, observed at each
// collection. (The store is the test reference here; in production a
// store/redis or store/rueidis store.)
func ExampleRegisterTokenLeases() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	store := storetest.NewReference()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(store, core.FixedWindow, core.PerMinute(1000).Named("api"),
		core.WithTokenLease(core.TokenLease{Max: 50, TTL: 100 * time.Millisecond}), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim)
	if err != nil {
		panic(err)
	}
	_, err = otelmetrics.RegisterTokenLeases(provider, func() []*httplimit.Policy { return []*httplimit.Policy{p} })
	if err != nil {
		panic(err)
	}
	for range 200 {
		if _, err := lim.Allow(context.Background(), "hot"); err != nil {
			panic(err)
		}
	}
	if err := p.ReturnLeasedTokens(context.Background()); err != nil {
		panic(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	values := map[string]int64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		values[m.Name] = m.Data.(metricdata.Sum[int64]).DataPoints[0].Value
	}
	fmt.Println("decisions:", values["ratewarden.token_lease.decisions"])
	fmt.Println("decided with no store call:", values["ratewarden.token_lease.local_decisions"] > 150)
	fmt.Println("store calls per decision below 0.25:", float64(values["ratewarden.token_lease.store_calls"])/float64(values["ratewarden.token_lease.decisions"]) < 0.25)
	fmt.Println("tokens given back:", values["ratewarden.token_lease.returned_tokens"] > 0)
	// Output:
	// decisions: 200
	// decided with no store call: true
	// store calls per decision below 0.25: true
	// tokens given back: true
}
