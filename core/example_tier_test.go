package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// Two plans on one limiter: each tier counts a key apart and names its
// policy, as the RateLimit-Policy header will.
func ExampleLimiter_Tier() {
	st, _ := memory.New()
	defer st.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	base, _ := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithClock(clock))
	free, _ := base.Tier("free", core.PerMinute(2))
	paid, err := base.Tier("paid", core.PerMinute(100), core.PerHour(1000))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 3 {
		d, _ := free.Allow(ctx, "user-7")
		fmt.Println(free.Name(), d.Allowed, d.Remaining)
	}
	d, _ := paid.Allow(ctx, "user-7")
	fmt.Println(paid.Name(), d.Allowed, d.Remaining, paid.Limits()[1].Name)
	_, err = base.Tier(`"quoted"`, core.PerSecond(1))
	fmt.Println(err)
	// Output:
	// free true 1
	// free true 0
	// free false 0
	// paid true 99 paid 1000/h
	// ratewarden: invalid limit: tier name "\"quoted\"" may hold only printable ASCII other than '"' and '\'
}

// Peek tells what a key could spend without spending it.
func ExampleLimiter_Peek() {
	st, _ := memory.New()
	defer st.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, _ := core.NewLimiter(st, core.FixedWindow, core.PerMinute(3), core.WithClock(clock))
	ctx := context.Background()
	_, _ = lim.Allow(ctx, "203.0.113.7")
	for range 2 {
		d, _ := lim.Peek(ctx, "203.0.113.7")
		fmt.Println(d.Allowed, d.Remaining)
	}
	// Output:
	// true 2
	// true 2
}

// An operator unblocks a client: Reset takes the key as the limiter got it.
func ExampleLimiter_Reset() {
	st, _ := memory.New()
	defer st.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, _ := core.NewLimiter(st, core.SlidingWindow, core.PerHour(1), core.WithClock(clock))
	ctx := context.Background()
	_, _ = lim.Allow(ctx, "alice")
	d, _ := lim.Allow(ctx, "alice")
	fmt.Println("before:", d.Allowed)
	if err := lim.Reset(ctx, "alice"); err != nil {
		fmt.Println(err)
		return
	}
	d, _ = lim.Allow(ctx, "alice")
	fmt.Println("after reset:", d.Allowed)
	// Output:
	// before: false
	// after reset: true
}

// Count only failed logins: every attempt spends on arrival, and a success
// gives its cost back, atomically.
func ExampleLimiter_Refund() {
	st, _ := memory.New()
	defer st.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, _ := core.NewLimiter(st, core.GCRA, core.PerMinute(3), core.WithClock(clock))
	ctx := context.Background()
	for _, ok := range []bool{false, true, true, true, false, false, false} {
		d, _ := lim.Allow(ctx, "login:alice")
		if !d.Allowed {
			fmt.Println("locked out, retry after", d.RetryAfter)
			continue
		}
		if ok {
			d, _ = lim.Refund(ctx, "login:alice", 1, d)
		}
		fmt.Printf("success=%v remaining=%d\n", ok, d.Remaining)
	}
	// Output:
	// success=false remaining=2
	// success=true remaining=2
	// success=true remaining=2
	// success=true remaining=2
	// success=false remaining=1
	// success=false remaining=0
	// locked out, retry after 20s
}
