package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A request reserves an estimate when it is admitted and settles at its real
// cost once it is known: a cost above the quota goes into the limiter's
// debt bound, and the next request waits for it.
func ExampleLimiter_Settle() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	clock := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(100), core.WithDebt(50), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	reserved, err := lim.AllowN(ctx, "client-7", 10) // the estimate
	if err != nil || !reserved.Allowed {
		panic(err)
	}
	after, err := lim.Settle(ctx, "client-7", 130, &reserved) // the real cost
	if err != nil {
		panic(err)
	}
	fmt.Println("remaining", after.Remaining, "debt", after.Debt, "retry after", after.RetryAfter)
	_, err = lim.Settle(ctx, "client-7", 130, &reserved)
	fmt.Println(err)
	// Output:
	// remaining 0 debt 30 retry after 18s
	// ratewarden: no reservation to settle: settle of a decision that reserved nothing, or was settled already
}
