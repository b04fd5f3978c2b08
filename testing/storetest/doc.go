// Package storetest is the conformance suite every ratewarden store runs
// against itself: scripted sequences of (time, key, cost) for every algorithm,
// refunds included, compared decision by decision with the pure-Go reference
// (core's TakeRequest.Decide); concurrency cases in which many goroutines
// hammer one key and exactly the limit must be admitted; a clock that steps
// back by a millisecond, an hour and over a year after a key was drained (no
// quota minted, recovery at the normal pace); and a core.Limiter
// over the store, for Peek, Reset, tiers that count a key apart, and refunds
// (clamped, after the window moved on, racing with spends).
//
// A store's test calls Run with a constructor:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) core.Store {
//			st, err := memory.New()
//			require.NoError(t, err)
//			t.Cleanup(func() { st.Close() })
//			return st
//		})
//	}
//
// The suite drives time through core.TakeRequest.Now, so a store that keeps
// its own time (Redis's TIME) must be run in its caller-clock mode.
package storetest
