package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// A hot key on a shared store takes its tokens in leases of up to 50 and
// spends them locally, one store call for many decisions; the window still
// admits exactly its limit. (The
// store is the package's test reference; store/luascript's stores lease
// from Redis.)
func ExampleWithTokenLease() {
	store := newLeasingStore()
	limiter, err := core.NewLimiter(store, core.FixedWindow, core.PerMinute(1000),
		core.WithTokenLease(core.TokenLease{Max: 50, TTL: 100 * time.Millisecond}))
	if err != nil {
		fmt.Println(err)
		return
	}
	admitted := 0
	for range 1200 {
		if d, err := limiter.Allow(context.Background(), "hot"); err == nil && d.Allowed {
			admitted++
		}
	}
	stats := limiter.TokenLeaseStats()
	fmt.Println("admitted:", admitted)
	fmt.Println("decided locally, with no store call:", stats.Local > 800)
	fmt.Println(limiter.ReturnLeasedTokens(context.Background()))
	// Output:
	// admitted: 1000
	// decided locally, with no store call: true
	// <nil>
}

// NewLimiter refuses a token lease it cannot keep exactly, saying why.
func ExampleValidateTokenLease() {
	fmt.Println(core.ValidateTokenLease(core.TokenLease{Max: 50, TTL: time.Second}, core.SlidingLog, []core.Limit{core.PerMinute(1000)}))
	fmt.Println(core.ValidateTokenLease(core.TokenLease{Max: 50, TTL: time.Minute}, core.GCRA, []core.Limit{core.PerSecond(1000)}))
	fmt.Println(core.ValidateTokenLease(core.TokenLease{Max: 5000, TTL: time.Second}, core.FixedWindow, []core.Limit{core.PerSecond(1000)}))
	// Output:
	// ratewarden: invalid option: the sliding log cannot be leased exactly (each admission is a timestamp the log holds when it happens); use the sliding window
	// ratewarden: invalid option: token lease TTL 1m0s is longer than the window of 1000/s
	// ratewarden: invalid option: token lease of 5000 tokens is above the limit 1000/s
}
