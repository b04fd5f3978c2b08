package core_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// Seed 001's driver experiment, on a simulated clock.
//
// The seed's driver offers requests in phases of 1, 2, 5, 10, 20, 25, 50 and 100
// per second, 10 x offered requests per phase (10 seconds' worth). Its sender
// starts a request, then sleeps 1/offered seconds, also after the last one;
// every request is its own thread that asks the limiter and, while denied,
// sleeps 10 ms and asks again. A phase ends when every request has been
// admitted (and the sender has finished sleeping); its rate is requests /
// seconds. One limiter serves every phase, back to back.
//
// Here a leaky-bucket request completes when its Delay has passed, as the
// middleware holds it that long.

// driverRates are seed 001's offered rates, per second.
var driverRates = []int64{1, 2, 5, 10, 20, 25, 50, 100}

// driverRetry is how long a denied request waits before asking again.
const driverRetry = int64(10_000) // µs

// driverPhase is one phase's outcome.
type driverPhase struct {
	offered, requests int64
	seconds           float64
}

func (p driverPhase) rate() float64 { return float64(p.requests) / p.seconds }

// runDriver runs the experiment for alg and lim, with phases of phaseLen (a
// whole number of seconds). Every arrival and every retry falls on a 10 ms
// grid (each offered rate's spacing is a multiple of 10 ms), so time moves in
// ticks of 10 ms; in one tick the waiting requests ask one after another until
// one is denied: the rest, asking the same thing at the same instant of a
// state the denial did not change, would be denied too.
func runDriver(t *testing.T, alg core.Algorithm, lim core.Limit, phaseLen time.Duration) []driverPhase {
	t.Helper()
	must.Zero(t, phaseLen%time.Second)
	var s core.State
	now := epochUS
	phases := make([]driverPhase, 0, len(driverRates))
	for _, offered := range driverRates {
		spacing := us(time.Second) / offered
		must.Zero(t, spacing%driverRetry)
		n := offered * int64(phaseLen/time.Second)
		start := now
		done := start + n*spacing // the sender's last sleep
		var sent, waiting int64
		for tick := start; sent < n || waiting > 0; tick += driverRetry {
			if waiting == 0 && start+sent*spacing > tick {
				tick = start + sent*spacing // idle until the next arrival
			}
			for sent < n && start+sent*spacing <= tick {
				sent++
				waiting++
			}
			for waiting > 0 {
				d, err := applyMicros(alg, &s, lim, 1, tick)
				must.NoError(t, err)
				if !d.Allowed {
					must.Positive(t, d.RetryAfter)
					break
				}
				waiting--
				done = max(done, tick+us(d.Delay))
			}
		}
		phases = append(phases, driverPhase{offered: offered, requests: n, seconds: float64(done-start) / 1e6})
		now = done
	}
	return phases
}

func formatPhases(ps []driverPhase) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%5d/s: %5d requests in %8.2f s: %6.3f/s\n", p.offered, p.requests, p.seconds, p.rate())
	}
	return b.String()
}

// With the seed's 10-second phases, every algorithm admits exactly the offered
// rate while it is at most the limit (10/s), and the limit once it is above,
// within 1%, except in two ways that are the algorithms' nature, not a fault:
//
//   - The token bucket, GCRA and the fixed window start the first overloaded
//     phase (20/s) with a full burst of 10 in hand (the 10/s phase never dipped
//     into it; for the fixed window, the phase starts on a window boundary), so
//     200 requests pass in 19 s: 10.53/s, as in the seed's own table (10.24/s).
//     The sliding log (no burst beyond Rate in any window of a Period) and the
//     leaky bucket (requests leave at the fixed pace whatever the queue) show
//     no such burst.
//   - The sliding window counter under sustained overload admits Rate-1 per
//     window, 9/s: its estimate prev x (1 - elapsed/Period) + cur only falls to
//     cur when elapsed reaches the Period, so with prev = 9 the 10th request of a
//     window never fits (9 x 0.001 + 9 + 1 > 10) until the next window starts,
//     where it sees prev = 9 at full weight again. Even offered exactly 10/s
//     (one request every 100 ms, from the start of each window) it falls
//     behind: at the start of a window the previous window's 10 count in full
//     (10 + 1 > 10) though one of them is already a whole period old, so the
//     counter, which assumes the previous window's requests were spread evenly,
//     denies, and the phase takes 11 s: 9.09/s. That is the approximation's
//     error (measured against the exact log in TestSlidingWindowError), erring
//     on the side of denial.
func TestDriverSeedPhases(t *testing.T) {
	lim := core.PerSecond(10)
	tests := []struct {
		alg core.Algorithm
		// want[i] is the admitted rate expected for driverRates[i].
		want []float64
	}{
		{core.TokenBucket, []float64{1, 2, 5, 10, 200.0 / 19, 10, 10, 10}},
		{core.GCRA, []float64{1, 2, 5, 10, 200.0 / 19, 10, 10, 10}},
		{core.FixedWindow, []float64{1, 2, 5, 10, 200.0 / 19, 10, 10, 10}},
		{core.LeakyBucket, []float64{1, 2, 5, 10, 10, 10, 10, 10}},
		{core.SlidingLog, []float64{1, 2, 5, 10, 10, 10, 10, 10}},
		{core.SlidingWindow, []float64{1, 2, 5, 100.0 / 11, 9, 9, 9, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			phases := runDriver(t, tt.alg, lim, 10*time.Second)
			t.Logf("%s\n%s", tt.alg, formatPhases(phases))
			must.Len(t, phases, len(driverRates))
			for i, p := range phases {
				expect.Equal(t, driverRates[i]*10, p.requests)
				expect.InEpsilon(t, tt.want[i], p.rate(), 0.01, "offered %d/s: %.3f/s", p.offered, p.rate())
			}
		})
	}
}

// Over phases ten times longer the burst is worth 0.5% at 20/s, and every
// algorithm but the sliding window counter admits min(offered, 10) within 1%;
// the counter admits min(offered, 9) but for the 10/s phase (9.09/s, above).
func TestDriverLongPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("long simulation")
	}
	lim := core.PerSecond(10)
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			phases := runDriver(t, alg, lim, 100*time.Second)
			for _, p := range phases {
				want := min(float64(p.offered), 10)
				if alg == core.SlidingWindow && p.offered >= 10 {
					want = 9
					if p.offered == 10 {
						want = 1000.0 / 110
					}
				}
				expect.InEpsilon(t, want, p.rate(), 0.01, "offered %d/s: %.3f/s", p.offered, p.rate())
			}
		})
	}
}
