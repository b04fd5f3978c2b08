package observerkit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// A collector of your own reads the token-lease counters of the policies in
// force at each collection; a policy a reload replaced stays counted under
// its name, so the totals never decrease.
func ExampleLeaseTotals() {
	store := storetest.NewReference()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	newPolicy := func() *httplimit.Policy {
		lim, err := core.NewLimiter(store, core.FixedWindow, core.PerMinute(1000).Named("api"),
			core.WithTokenLease(core.TokenLease{Max: 50, TTL: 100 * time.Millisecond}), core.WithClock(clock))
		if err != nil {
			panic(err)
		}
		p, err := httplimit.New(lim)
		if err != nil {
			panic(err)
		}
		return p
	}
	totals, err := observerkit.NewLeaseTotals(observerkit.DefaultMaxPolicies)
	if err != nil {
		panic(err)
	}
	old := newPolicy()
	for range 100 {
		if _, err := old.Limiter().Allow(context.Background(), "hot"); err != nil {
			panic(err)
		}
	}
	fmt.Println(totals.ByPolicy([]*httplimit.Policy{old})[0].Decisions)
	replaced := newPolicy() // a reload
	for range 10 {
		if _, err := replaced.Limiter().Allow(context.Background(), "hot"); err != nil {
			panic(err)
		}
	}
	for range 2 {
		got := totals.ByPolicy([]*httplimit.Policy{replaced})
		fmt.Println(got[0].Policy, got[0].Decisions)
	}
	// Output:
	// 100
	// api 110
	// api 110
}
