package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A login limiter of 5 attempts a minute whose 6th attempt puts the client
// in a penalty box for 15 minutes: refused whatever the limit says meanwhile,
// every instance sharing the store alike, until the block ends or a reset
// lifts it.
func ExampleWithBlockFor() {
	store, err := memory.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	logins, err := core.NewLimiter(store, core.GCRA, core.PerMinute(5), core.WithBlockFor(15*time.Minute), core.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 6 {
		d, _ := logins.Allow(ctx, "alice")
		fmt.Printf("allowed=%v blocked=%v retry-after=%s\n", d.Allowed, d.Blocked, d.RetryAfter)
	}
	clock.Advance(5 * time.Minute) // the limit alone would admit again
	d, _ := logins.Allow(ctx, "alice")
	fmt.Printf("5m later: allowed=%v blocked=%v retry-after=%s\n", d.Allowed, d.Blocked, d.RetryAfter)
	_ = logins.Reset(ctx, "alice") // e.g. after a successful login
	d, _ = logins.Allow(ctx, "alice")
	fmt.Printf("after a reset: allowed=%v\n", d.Allowed)
	// Output:
	// allowed=true blocked=false retry-after=0s
	// allowed=true blocked=false retry-after=0s
	// allowed=true blocked=false retry-after=0s
	// allowed=true blocked=false retry-after=0s
	// allowed=true blocked=false retry-after=0s
	// allowed=false blocked=false retry-after=15m0s
	// 5m later: allowed=false blocked=true retry-after=10m0s
	// after a reset: allowed=true
}
