package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

func ExampleParseLimit() {
	for _, s := range []string{"10/s", "100/m", "5/30s", "10/s burst 20", " 3 / 1h30m ", "0/s", "10/fortnight"} {
		l, err := core.ParseLimit(s)
		if err != nil {
			fmt.Println(errors.Is(err, core.ErrInvalidLimit), err)
			continue
		}
		fmt.Printf("%-14q rate %d per %s, burst %d, one every %s: %s\n", s, l.Rate, l.Period, l.Burst, l.EmissionInterval(), l)
	}
	// Output:
	// "10/s"         rate 10 per 1s, burst 10, one every 100ms: 10/s
	// "100/m"        rate 100 per 1m0s, burst 100, one every 600ms: 100/m
	// "5/30s"        rate 5 per 30s, burst 5, one every 6s: 5/30s
	// "10/s burst 20" rate 10 per 1s, burst 20, one every 100ms: 10/s burst 20
	// " 3 / 1h30m "  rate 3 per 1h30m0s, burst 3, one every 30m0s: 3/1h30m0s
	// true ratewarden: invalid limit: "0/s": rate must be positive, got 0
	// true ratewarden: invalid limit: "10/fortnight": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)
}

// The algorithms are pure functions of states, limits, a cost and a time:
// here a token bucket of 3, refilled one token a second, meets a burst.
func ExampleAlgorithm_ApplyAll() {
	states := []core.State{{}} // one state per limit, the zero State for a new key
	limits := []core.Limit{core.PerSecond(1).WithBurst(3)}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, ms := range []int{0, 0, 0, 0, 400, 1000, 1500, 5000} {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		d, err := core.TokenBucket.ApplyAll(states, limits, 1, core.Micros(now))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("t=%-5s allowed=%-5v remaining=%d retry-after=%-5s reset-after=%s\n",
			time.Duration(ms)*time.Millisecond, d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter)
	}
	// Output:
	// t=0s    allowed=true  remaining=2 retry-after=0s    reset-after=1s
	// t=0s    allowed=true  remaining=1 retry-after=0s    reset-after=2s
	// t=0s    allowed=true  remaining=0 retry-after=0s    reset-after=3s
	// t=0s    allowed=false remaining=0 retry-after=1s    reset-after=3s
	// t=400ms allowed=false remaining=0 retry-after=600ms reset-after=2.6s
	// t=1s    allowed=true  remaining=0 retry-after=0s    reset-after=3s
	// t=1.5s  allowed=false remaining=0 retry-after=500ms reset-after=2.5s
	// t=5s    allowed=true  remaining=2 retry-after=0s    reset-after=1s
}

// A limiter of 2 per second and 3 per minute per key, on the in-memory store,
// with a clock moved by hand.
func ExampleLimiter_Allow() {
	store, err := memory.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	limiter, err := core.NewLimiter(store, core.GCRA, core.PerSecond(2),
		core.WithLimit(core.PerMinute(3)), core.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, step := range []time.Duration{0, 0, 0, 500 * time.Millisecond, time.Second} {
		clock.Advance(step)
		d, err := limiter.Allow(ctx, "203.0.113.7")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("allowed=%-5v limit=%-7s remaining=%d retry-after=%s\n", d.Allowed, d.Limit.Name, d.Remaining, d.RetryAfter)
	}
	// Output:
	// allowed=true  limit=default remaining=1 retry-after=0s
	// allowed=true  limit=default remaining=0 retry-after=0s
	// allowed=false limit=default remaining=0 retry-after=500ms
	// allowed=true  limit=default remaining=0 retry-after=0s
	// allowed=false limit=3/m     remaining=0 retry-after=18.5s
}
