package storetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// The Reference store decides with core's pure algorithms; the suite compares
// every store with it. A store's own test runs the suite with one line:
//
//	storetest.Run(t, func(t *testing.T) core.Store { return myStore(t) })
func ExampleReference() {
	ref := storetest.NewReference()
	req := core.TakeRequest{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1, Now: storetest.Start}
	for range 3 {
		d, _ := ref.Take(context.Background(), req)
		fmt.Println(d.Allowed, d.Remaining, d.RetryAfter.Round(time.Second))
	}
	// Output:
	// true 1 0s
	// true 0 0s
	// false 0 33s
}
