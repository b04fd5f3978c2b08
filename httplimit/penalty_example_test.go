package httplimit_test

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A client that trips the limit of 5 logins a minute is refused for 15
// minutes, whatever the limit says meanwhile: what it sees is a 429 whose
// Retry-After and RateLimit t are the block's end, and the observer hears
// "denied" for the request that started the block, "blocked" for those it
// refused.
func ExampleOutcomeBlocked() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	clock := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	logins, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5).Named("login"), core.WithBlockFor(15*time.Minute), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	heard := httplimit.ObserverFunc(func(e httplimit.Event) {
		if e.Outcome != httplimit.OutcomeAllowed {
			fmt.Println(e.Outcome, e.Policy, e.Decision.BlockStarted, e.Decision.RetryAfter)
		}
	})
	mw, err := stdhttp.New(logins, httplimit.WithObserver(heard))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	for range 5 {
		get(h)
	}
	w := get(h)
	fmt.Println(w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
	clock.Advance(time.Minute)
	w = get(h)
	fmt.Println(w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
	// Output:
	// denied login true 15m0s
	// 429 900 "login";r=0;t=900
	// blocked login false 14m0s
	// 429 840 "login";r=0;t=840
}

// The README's penalty box: a login limiter of 5 attempts a minute whose
// 6th attempt shuts the client out for 15 minutes, on every instance
// sharing the store.
func ExampleNew_penaltyBox() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()

	logins, err := core.NewLimiter(store, core.GCRA, core.PerMinute(5), core.WithBlockFor(15*time.Minute))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(logins)
	if err != nil {
		panic(err)
	}

	h := mw(ok)
	for i := range 7 {
		w := get(h)
		if i >= 4 {
			fmt.Printf("%d: %d Retry-After: %q\n", i+1, w.Code, w.Header().Get("Retry-After"))
		}
	}
	// Output:
	// 5: 200 Retry-After: ""
	// 6: 429 Retry-After: "900"
	// 7: 429 Retry-After: "900"
}
