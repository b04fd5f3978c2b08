package prommetrics_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// Counters of what each policy's token leases did: decisions, the share
// decided with no store call, store calls, leased and returned tokens, read
// at each scrape. (The store is the test reference here; in production a
// store/redis or store/rueidis store.)
func ExampleRegisterTokenLeases() {
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
	reg := prometheus.NewRegistry()
	_, err = prommetrics.RegisterTokenLeases(reg, func() []*httplimit.Policy { return []*httplimit.Policy{p} })
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
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	values := map[string]float64{}
	for _, f := range families {
		values[f.GetName()] = f.GetMetric()[0].GetCounter().GetValue()
	}
	fmt.Println("decisions:", values["ratewarden_token_lease_decisions_total"])
	fmt.Println("decided with no store call:", values["ratewarden_token_lease_local_decisions_total"] > 150)
	fmt.Println("store calls per decision below 0.25:", values["ratewarden_token_lease_store_calls_total"]/values["ratewarden_token_lease_decisions_total"] < 0.25)
	fmt.Println("every leased token spent or returned:", values["ratewarden_token_lease_leased_tokens_total"]-values["ratewarden_token_lease_returned_tokens_total"] <= 200)
	// Output:
	// decisions: 200
	// decided with no store call: true
	// store calls per decision below 0.25: true
	// every leased token spent or returned: true
}
