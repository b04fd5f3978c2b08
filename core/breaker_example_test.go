package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// refusing is a store that cannot decide, as a Redis that is not running.
type refusing struct{ calls *int }

func (s refusing) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	*s.calls++
	return core.Decision{}, errors.New("connection refused")
}

// Every limiter has a circuit breaker on its store: after five failures in a
// row it stops asking the store for a while and answers ErrBreakerOpen at
// once, with the time until it probes the store again. Here it waits up to
// 30 s between probes instead of 10 s, and no jitter shortens the intervals.
func ExampleWithBreaker() {
	calls := 0
	store := refusing{&calls}
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	b := core.DefaultBreaker() // 5 failures in a row; open 1 s, doubling up to 10 s; 20% jitter
	b.MaxOpen = 30 * time.Second
	b.Jitter = 0
	lim, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10), core.WithBreaker(b), core.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 7 {
		d, err := lim.Allow(ctx, "203.0.113.7")
		fmt.Printf("%v (retry after %s) store calls: %d, breaker %s\n", err, d.RetryAfter, calls, lim.BreakerState())
		clock.Advance(250 * time.Millisecond)
	}
	clock.Advance(time.Second)
	_, err = lim.Allow(ctx, "203.0.113.7") // the probe
	fmt.Println(err, calls)
	d, err := lim.Allow(ctx, "203.0.113.7")
	fmt.Println(err, d.RetryAfter)
	// Output:
	// connection refused (retry after 0s) store calls: 1, breaker closed
	// connection refused (retry after 0s) store calls: 2, breaker closed
	// connection refused (retry after 0s) store calls: 3, breaker closed
	// connection refused (retry after 0s) store calls: 4, breaker closed
	// connection refused (retry after 0s) store calls: 5, breaker open
	// ratewarden: store circuit breaker open (retry after 750ms) store calls: 5, breaker open
	// ratewarden: store circuit breaker open (retry after 500ms) store calls: 5, breaker open
	// connection refused 6
	// ratewarden: store circuit breaker open 2s
}

// A limiter without the breaker asks the store for every decision, however
// often it fails.
func ExampleWithoutBreaker() {
	calls := 0
	lim, err := core.NewLimiter(refusing{&calls}, core.GCRA, core.PerSecond(10), core.WithoutBreaker()) // every request asks the store, and waits for its timeout while it does not answer
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 20 {
		_, _ = lim.Allow(context.Background(), "203.0.113.7")
	}
	fmt.Println(calls, lim.BreakerState())
	// Output:
	// 20 closed
}

// The breaker's settings: the defaults, one changed, or none at all.
func ExampleDefaultBreaker() {
	store, err := memory.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	b := core.DefaultBreaker() // 5 failures in a row; open 1 s, doubling up to 10 s; 20% jitter
	b.MaxOpen = 30 * time.Second
	lim, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10), core.WithBreaker(b))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Failures, b.MinOpen, b.MaxOpen, b.Jitter, lim.BreakerState())
	off, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10), core.WithoutBreaker()) // every request asks the store
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(off.BreakerState())
	b.MinOpen = 0
	_, err = core.NewLimiter(store, core.GCRA, core.PerSecond(10), core.WithBreaker(b))
	fmt.Println(errors.Is(err, core.ErrInvalidOption), err)
	// Output:
	// 5 1s 30s 0.2 closed
	// closed
	// true ratewarden: invalid option: breaker MinOpen 0s, want above 0
}
