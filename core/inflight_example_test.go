package core_test

import (
	"context"
	"fmt"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// At most 2 requests of a client running at once, beside a rate of 10 a
// second: a request takes a slot before it runs and gives it back, in a
// defer, when it ends.
func ExampleWithInFlight() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(10), core.WithInFlight(core.Concurrent(2)))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	var running []core.Slot
	for range 3 {
		slot, d, err := lim.Acquire(ctx, "alice")
		if err != nil {
			panic(err)
		}
		fmt.Println("allowed:", d.Allowed, "held:", d.Held, "retry after:", d.RetryAfter)
		if d.Allowed {
			running = append(running, slot)
		}
	}
	for _, slot := range running {
		if err := slot.Release(ctx); err != nil {
			panic(err)
		}
	}
	fmt.Println("held now:", lim.SlotsHeld())
	// Output:
	// allowed: true held: 1 retry after: 0s
	// allowed: true held: 2 retry after: 0s
	// allowed: false held: 2 retry after: 1s
	// held now: 0
}

// Bad in-flight limits are refused when the limiter is built.
func ExampleInFlight_Validate() {
	for _, f := range []core.InFlight{core.Concurrent(0), core.Concurrent(100_000), {Slots: 5}} {
		fmt.Println(f.Validate())
	}
	// Output:
	// ratewarden: invalid limit: in-flight limit of 0 slots: it must be at least 1
	// ratewarden: invalid limit: in-flight limit of 100000 slots is above the maximum of 10000
	// ratewarden: invalid limit: in-flight lease of 0s: it must be positive
}
