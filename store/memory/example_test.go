package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line use: a bounded in-memory store behind a limiter.
func ExampleNew() {
	st, err := memory.New(memory.WithMaxKeys(100_000))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(2), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		d, _ := lim.Allow(context.Background(), "203.0.113.7")
		fmt.Printf("request %d: allowed=%v remaining=%d retry-after=%s\n", i, d.Allowed, d.Remaining, d.RetryAfter)
	}
	clock.Advance(500 * time.Millisecond)
	d, _ := lim.Allow(context.Background(), "203.0.113.7")
	fmt.Printf("after 500ms: allowed=%v\n", d.Allowed)
	// Output:
	// request 1: allowed=true remaining=1 retry-after=0s
	// request 2: allowed=true remaining=0 retry-after=0s
	// request 3: allowed=false remaining=0 retry-after=500ms
	// after 500ms: allowed=true
}

// Several limits on one request: all must allow, and a denial spends from none.
func ExampleStore_Take() {
	st, _ := memory.New()
	defer st.Close()
	req := core.TakeRequest{
		Key:       "api-key-42",
		Algorithm: core.SlidingWindow,
		Limits:    []core.Limit{core.PerSecond(10), core.PerHour(1000).Named("hourly")},
		Cost:      1,
		Now:       time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
	}
	d, _ := st.Take(context.Background(), req)
	fmt.Println(d.Allowed, d.Limit, d.Remaining)
	// Output: true 10/s 9
}

// Stats feeds the metrics modules: the keys held and the keys evicted to
// keep within the bound.
func ExampleStore_Stats() {
	st, _ := memory.New(memory.WithMaxKeys(2), memory.WithShards(1))
	defer st.Close()
	lim, _ := core.NewLimiter(st, core.FixedWindow, core.PerMinute(10))
	for _, key := range []string{"a", "b", "c", "d"} {
		_, _ = lim.Allow(context.Background(), key)
	}
	fmt.Printf("%+v\n", st.Stats())
	// Output: {Keys:2 Evictions:2 Refused:0}
}

// A full store that refuses new keys instead of evicting held ones: the new
// key gets core.ErrStoreFull (package httplimit answers 503 with
// Retry-After), and the key already held keeps its count.
func ExampleWithRefuseWhenFull() {
	st, err := memory.New(memory.WithMaxKeys(1), memory.WithRefuseWhenFull())
	if err != nil {
		panic(err)
	}
	defer st.Close()

	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(3), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	d, _ := lim.Allow(ctx, "alice")
	fmt.Printf("alice: allowed=%v remaining=%d\n", d.Allowed, d.Remaining)
	_, err = lim.Allow(ctx, "bob")
	fmt.Printf("bob: full=%v\n", errors.Is(err, core.ErrStoreFull))
	d, _ = lim.Allow(ctx, "alice")
	fmt.Printf("alice: allowed=%v remaining=%d\n", d.Allowed, d.Remaining)
	fmt.Printf("refused=%d\n", st.Stats().Refused)
	// Output:
	// alice: allowed=true remaining=2
	// bob: full=true
	// alice: allowed=true remaining=1
	// refused=1
}
