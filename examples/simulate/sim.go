package main

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// epoch is where simulated time starts: a whole second, so fixed windows of a
// second start at the phase starts of the first phase.
var epoch = core.Micros(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// retryEvery is how long a denied client waits before trying again (seed
// 001's driver sleeps 10 ms between tries).
const retryEvery = int64(10_000) // µs

// offeredRates are seed 001's phases, in requests per second.
var offeredRates = []int64{1, 2, 5, 10, 20, 25, 50, 100}

// row is one line of the seed's table: a phase that offered Requests at
// Offered per second, and how long the limiter took to let all of them through.
type row struct {
	Offered  int64
	Requests int64
	Seconds  float64
	Rate     float64
}

// driver runs seed 001's experiment on a simulated clock: phase after phase,
// requests arrive at the offered rate for phaseLen; a denied request tries
// again every 10 ms until admitted; a leaky-bucket request completes after its
// Delay. A phase ends when its last request has completed (and not before its
// last request was sent, as in the seed); its rate is requests / seconds. One
// limiter (one State) serves every phase, as in the seed.
//
// Simulated time moves in steps of 10 ms, which every offered rate's spacing
// is a multiple of, so every attempt falls on a step. Within a step, once one
// request is denied every other one is too (a denial changes nothing, and the
// time is the same), so a step costs one Apply per admission plus one.
func driver(alg core.Algorithm, lim core.Limit, phaseLen time.Duration) ([]row, error) {
	if phaseLen < time.Second || phaseLen%time.Second != 0 {
		return nil, fmt.Errorf("phase length must be a whole number of seconds, at least 1s; got %s", phaseLen)
	}
	var st [1]core.State
	lims := []core.Limit{lim}
	now := epoch
	rows := make([]row, 0, len(offeredRates))
	for _, offered := range offeredRates {
		spacing := int64(1_000_000) / offered // a multiple of retryEvery for every seed rate
		n := offered * int64(phaseLen/time.Second)
		start := now
		lastDone := start + n*spacing // the seed's sender sleeps after its last request too
		var sent, waiting int64
		for t := start; sent < n || waiting > 0; t += retryEvery {
			if waiting == 0 && start+sent*spacing > t {
				t = start + sent*spacing // nothing to do until the next arrival
			}
			for sent < n && start+sent*spacing <= t {
				sent++
				waiting++
			}
			for waiting > 0 {
				d, err := alg.ApplyAll(st[:], lims, 1, t)
				if err != nil {
					return nil, err
				}
				if !d.Allowed {
					break
				}
				waiting--
				lastDone = max(lastDone, t+d.Delay.Microseconds())
			}
			now = t
		}
		now = max(now, lastDone)
		secs := float64(lastDone-start) / 1e6
		rows = append(rows, row{Offered: offered, Requests: n, Seconds: secs, Rate: float64(n) / secs})
	}
	return rows, nil
}

// floodPlan is the chart's scenario, in units of the limit's period P: a client
// silent until 0.8 P, then sending ten times the limit's rate (one request
// every P/(10 Rate); every 10 ms for 10/s) until 3.2 P; denied requests are
// dropped. Starting just before a window boundary shows the fixed window's
// burst.
type floodPlan struct {
	Start, End, Every time.Duration
}

func planFor(lim core.Limit) floodPlan {
	return floodPlan{
		Start: lim.Period * 8 / 10,
		End:   lim.Period * 32 / 10,
		Every: max(time.Microsecond, (lim.Period / time.Duration(10*lim.Rate)).Truncate(time.Microsecond)),
	}
}

// flood runs the chart's scenario and returns the instants, as offsets from
// the start, at which admitted requests are passed on (after their Delay, for
// the leaky bucket), in order.
func flood(alg core.Algorithm, lim core.Limit) ([]time.Duration, error) {
	plan := planFor(lim)
	var st [1]core.State
	lims := []core.Limit{lim}
	var passed []time.Duration
	for off := plan.Start; off < plan.End; off += plan.Every {
		d, err := alg.ApplyAll(st[:], lims, 1, epoch+off.Microseconds())
		if err != nil {
			return nil, err
		}
		if d.Allowed && off+d.Delay < plan.End {
			passed = append(passed, off+d.Delay)
		}
	}
	return passed, nil
}

// busiest returns the most instants (sorted) that fall in any half-open window
// [t, t+w).
func busiest(times []time.Duration, w time.Duration) int {
	most, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= w {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}
