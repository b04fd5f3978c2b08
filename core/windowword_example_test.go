package core_test

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// A store keeps a window's state in one word and updates it lock-free: load
// the word, swap in the next one, then build the decision from the word it
// replaced. Package store/memory does this for every key.
func ExampleTakeRequest_AdvanceWindowWord() {
	req := core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1}
	pk, ok := req.WindowPacking()
	fmt.Println("packs into a word:", ok)

	var word atomic.Int64 // 0: a fresh state
	now := core.Micros(time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC))
	for range 3 {
		var d core.Decision
		for {
			old := word.Load()
			if next := req.AdvanceWindowWord(old, now); next == old || word.CompareAndSwap(old, next) {
				if err := req.DecideWindowWord(&d, old, now); err != nil {
					panic(err)
				}
				break
			}
		}
		fmt.Printf("allowed=%v remaining=%d retry-after=%s\n", d.Allowed, d.Remaining, d.RetryAfter)
	}
	s := pk.Unpack(word.Load())
	fmt.Println("window:", time.UnixMicro(s.T).UTC().Format(time.TimeOnly), "count:", s.N)
	fmt.Println("recovered at:", time.UnixMicro(pk.FreshAt(word.Load())).UTC().Format(time.TimeOnly))
	// Output:
	// packs into a word: true
	// allowed=true remaining=1 retry-after=0s
	// allowed=true remaining=0 retry-after=0s
	// allowed=false remaining=0 retry-after=30s
	// window: 12:00:00 count: 2
	// recovered at: 12:01:00
}
