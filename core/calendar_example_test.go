package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A quota of 3 calls a month for a customer in New York, resetting on the
// 31st (the 30th in April) at midnight there: the decision's ResetAfter and
// RetryAfter count to that boundary, which the headers send as seconds.
func ExampleMonthly() {
	quota := core.Monthly(3).In("America/New_York").AnchoredOn(31)
	clock := core.NewManualClock(time.Date(2026, 4, 29, 22, 0, 0, 0, time.UTC))
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	limiter, err := core.NewLimiter(store, core.FixedWindow, quota, core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	for range 4 {
		d, err := limiter.Allow(context.Background(), "customer-42")
		if err != nil {
			panic(err)
		}
		fmt.Println(d.Allowed, d.Remaining, d.ResetAfter, d.RetryAfter)
	}
	_, end, _ := quota.WindowAt(clock.Now())
	fmt.Println("the quota resets at", end)
	// Output:
	// true 2 6h0m0s 0s
	// true 1 6h0m0s 0s
	// true 0 6h0m0s 0s
	// false 0 6h0m0s 6h0m0s
	// the quota resets at 2026-04-30 00:00:00 -0400 EDT
}

// Calendar limits are written as ParseLimit reads them, in a rules
// document and in the example servers' -limit too.
func ExampleParseLimit_calendar() {
	for _, s := range []string{"10000/month", "500/week anchor 7", "1000/day in Europe/Berlin",
		"10000/month in America/New_York anchor 15", "1000/day", "100/month in Mars/Olympus"} {
		l, err := core.ParseLimit(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-42q calendar %s, zone %q, anchor %d: %s\n", s, l.Calendar, l.Zone, l.AnchorDay, l)
	}
	// Output:
	// "10000/month"                              calendar month, zone "", anchor 0: 10000/month
	// "500/week anchor 7"                        calendar week, zone "", anchor 7: 500/week anchor 7
	// "1000/day in Europe/Berlin"                calendar day, zone "Europe/Berlin", anchor 0: 1000/day in Europe/Berlin
	// "10000/month in America/New_York anchor 15" calendar month, zone "America/New_York", anchor 15: 10000/month in America/New_York anchor 15
	// "1000/day"                                 calendar none, zone "", anchor 0: 1000/d
	// ratewarden: invalid limit: "100/month in Mars/Olympus": unknown time zone "Mars/Olympus" (want an IANA name such as Europe/Berlin; without a system tz database, import _ "time/tzdata")
}

// A monthly quota of a billing plan: 10,000 calls, resetting on the 15th at
// midnight in the customer's zone, counted by the fixed window.
func ExampleLimit_AnchoredOn() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	quota := core.Monthly(10000).In("America/New_York").AnchoredOn(15)
	limiter, err := core.NewLimiter(store, core.FixedWindow, quota)
	if err != nil {
		panic(err)
	}
	fmt.Println(limiter.Limits()[0])
	start, end, _ := quota.WindowAt(time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC))
	fmt.Println(start, "to", end)
	_, err = core.NewLimiter(store, core.GCRA, quota)
	fmt.Println(err)
	// Output:
	// 10000/month in America/New_York anchor 15
	// 2026-10-15 00:00:00 -0400 EDT to 2026-11-15 00:00:00 -0500 EST
	// ratewarden: invalid limit: gcra cannot follow calendar months (its windows are not of one length); use fixed-window or sliding-window for 10000/month in America/New_York anchor 15
}
