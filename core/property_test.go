package core_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// event is one request of a random trace and what became of it.
type event struct {
	at, cost int64
	d        core.Decision
}

// randomLimit returns a limit with a small rate, a period of a second to a
// minute (not always a round number of microseconds per event), and, for the
// algorithms that take one, a random burst.
func randomLimit(rng *rand.Rand, alg core.Algorithm) core.Limit {
	periods := []time.Duration{time.Second, 7300 * time.Millisecond, time.Minute, 999_999 * time.Microsecond}
	l := core.Every(1+rng.Int64N(20), periods[rng.IntN(len(periods))])
	if alg.OneWord() {
		l = l.WithBurst(1 + rng.Int64N(3*l.Rate))
	}
	return l
}

// randomTrace runs n requests of cost 1 to 3 at random arrivals through alg and
// l: gaps drawn from an exponential distribution around a random multiple of
// the emission interval, with now and then a burst of simultaneous requests.
// Every decision is checked against its own promises (checkDecision).
func randomTrace(t *testing.T, rng *rand.Rand, alg core.Algorithm, l core.Limit, n int) []event {
	t.Helper()
	var s core.State
	now := epochUS + rng.Int64N(us(l.Period))
	mean := float64(us(l.EmissionInterval())) * (0.2 + 2*rng.Float64())
	events := make([]event, 0, n)
	for range n {
		if rng.IntN(20) != 0 { // else: at the same instant as the last
			now += int64(rng.ExpFloat64() * mean)
		}
		cost := 1 + rng.Int64N(3)
		before := clone(s)
		d, err := applyMicros(alg, &s, l, cost, now)
		must.NoError(t, err)
		checkDecision(t, alg, before, clone(s), l, cost, now, d)
		events = append(events, event{at: now, cost: cost, d: d})
	}
	return events
}

// admittedAt returns the admitted requests' instants (admission plus Delay:
// when the request is passed on) and costs, in trace order.
func admittedAt(events []event) (at, cost []int64) {
	for _, e := range events {
		if e.d.Allowed {
			at = append(at, e.at+us(e.d.Delay))
			cost = append(cost, e.cost)
		}
	}
	return at, cost
}

const propertySeeds = 8

// The sliding log never admits more than Rate in any window of length Period,
// checked by brute force: for every admitted request, the cost admitted in
// the Period that ends with it.
func TestSlidingLogNeverExceedsRate(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		rng := rand.New(rand.NewPCG(seed, 1))
		l := randomLimit(rng, core.SlidingLog)
		at, cost := admittedAt(randomTrace(t, rng, core.SlidingLog, l, 3000))
		must.NotEmpty(t, at)
		for i := range at {
			var sum int64
			for j := range at {
				if at[j] > at[i]-us(l.Period) && at[j] <= at[i] {
					sum += cost[j]
				}
			}
			if sum > l.Rate {
				t.Fatalf("seed %d, %s: %d admitted in the period ending with request %d", seed, l, sum, i)
			}
		}
	}
}

// The token bucket and GCRA never admit more than Burst + t/interval in any
// interval of length t (interval = Period/Rate rounded up, so that is at most
// Burst + Rate x t/Period), and they decide alike.
func TestBucketsNeverExceedBurstPlusRate(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		rng := rand.New(rand.NewPCG(seed, 2))
		l := randomLimit(rng, core.GCRA)
		traceSeed := rng.Uint64()
		var traces [][]event
		for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA} {
			events := randomTrace(t, rand.New(rand.NewPCG(traceSeed, 3)), alg, l, 3000)
			traces = append(traces, events)
			at, cost := admittedAt(events)
			checkBurstBound(t, at, cost, l)
		}
		must.Equal(t, traces[0], traces[1], "token bucket and GCRA decide alike")
	}
}

// checkBurstBound checks that the cost admitted at instants at[i..j] is at most
// Burst + (at[j]-at[i])/interval, for every i <= j (brute force).
func checkBurstBound(t *testing.T, at, cost []int64, l core.Limit) {
	t.Helper()
	must.NotEmpty(t, at)
	interval := us(l.EmissionInterval())
	for i := range at {
		var sum int64
		for j := i; j < len(at); j++ {
			sum += cost[j]
			span := at[j] - at[i]
			if sum > l.Burst+span/interval || float64(sum) > float64(l.Burst)+float64(l.Rate)*float64(span)/float64(us(l.Period)) {
				t.Fatalf("%s: %d admitted by requests %d..%d over %d µs", l, sum, i, j, span)
			}
		}
	}
}

// The leaky bucket passes requests on in order, a request of cost c taking c
// slots of one emission interval each, so two releases are never closer than
// the earlier one's cost x interval; a request never waits more than the
// queue of Burst slots; and GCRA, the same meter without the queue, is bound
// the same way beyond its burst (TestBucketsNeverExceedBurstPlusRate).
func TestLeakyBucketSpacing(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		rng := rand.New(rand.NewPCG(seed, 4))
		l := randomLimit(rng, core.LeakyBucket)
		interval := us(l.EmissionInterval())
		events := randomTrace(t, rng, core.LeakyBucket, l, 3000)
		var last, lastCost int64
		for _, e := range events {
			if !e.d.Allowed {
				continue
			}
			must.LessOrEqual(t, us(e.d.Delay)+e.cost*interval, l.Burst*interval, "%s: the queue holds Burst slots", l)
			release := e.at + us(e.d.Delay)
			if lastCost > 0 {
				must.GreaterOrEqual(t, release-last, lastCost*interval, "%s: releases at %d and %d", l, last, release)
			}
			last, lastCost = release, e.cost
		}
		must.Positive(t, lastCost)
		// Released, the leaky bucket has no burst beyond the request in hand.
		at, cost := admittedAt(events)
		for i := range at {
			var sum int64
			for j := i; j < len(at); j++ {
				sum += cost[j]
				if sum-cost[j] > (at[j]-at[i])/interval {
					t.Fatalf("%s: %d released before request %d in %d µs", l, sum-cost[j], j, at[j]-at[i])
				}
			}
		}
	}
}

// The window counters never admit more than Rate in one aligned window.
func TestWindowsNeverExceedRatePerWindow(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for seed := range uint64(propertySeeds) {
			rng := rand.New(rand.NewPCG(seed, 5))
			l := randomLimit(rng, alg)
			p := us(l.Period)
			at, cost := admittedAt(randomTrace(t, rng, alg, l, 3000))
			must.NotEmpty(t, at)
			perWindow := map[int64]int64{}
			for i := range at {
				perWindow[at[i]/p] += cost[i]
				must.LessOrEqual(t, perWindow[at[i]/p], l.Rate, "%s %s", alg, l)
			}
		}
	}
}

// FuzzApply drives any algorithm under any valid limit through any sequence
// of (time step, cost), the clock free to step back: nothing panics, and every
// decision keeps its promises (checkDecision: Remaining >= 0, RetryAfter > 0
// exactly when denied and then exact, a denial changes nothing). Each step is
// three bytes: a signed time step in 1/64ths of the period, plus a few µs, and
// a cost of 0 to 7.
func FuzzApply(f *testing.F) {
	f.Add(uint8(0), uint16(10), uint32(1_000_000), uint16(0), []byte{1, 0, 1, 0, 0, 1, 0, 0, 3, 200, 7, 2, 64, 0, 1})
	f.Add(uint8(4), uint16(7), uint32(60_000_000), uint16(0), []byte{0, 0, 1, 0, 0, 1, 0, 0, 1, 19, 0, 1, 255, 3, 2})
	f.Add(uint8(1), uint16(3), uint32(999_999), uint16(5), []byte{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 4})
	f.Add(uint8(3), uint16(2), uint32(60_000_000), uint16(0), []byte{0, 0, 1, 29, 0, 1, 20, 0, 1, 50, 0, 1})
	f.Fuzz(func(t *testing.T, algByte uint8, rate uint16, periodUS uint32, burst uint16, ops []byte) {
		algs := core.Algorithms()
		alg := algs[int(algByte)%len(algs)]
		l := core.Limit{Rate: 1 + int64(rate%1000), Period: time.Duration(1+periodUS%200_000_000) * time.Microsecond}
		if alg.OneWord() {
			l.Burst = int64(burst % 2000)
		}
		if alg.ValidateLimit(l) != nil {
			return
		}
		var s core.State
		now := epochUS
		p := us(l.Period)
		for len(ops) >= 3 {
			step := int64(int8(ops[0]))*max(1, p/64) + int64(ops[1])
			cost := int64(ops[2] % 8)
			ops = ops[3:]
			now = max(0, now+step)
			before := clone(s)
			d, err := applyMicros(alg, &s, l, cost, now)
			must.NoError(t, err)
			checkDecision(t, alg, before, clone(s), l, cost, now, d)
			if s.N > 0 && alg == core.SlidingLog {
				must.LessOrEqual(t, s.N, l.Rate)
				must.LessOrEqual(t, int64(len(s.Log)), l.Rate)
			}
		}
	})
}

// FuzzApplyAll checks ApplyAll's promise over two limits: it admits exactly
// when each limit alone would, and a denial changes neither state.
func FuzzApplyAll(f *testing.F) {
	f.Add(uint8(2), []byte{0, 0, 0, 1, 0, 0, 0, 9, 0, 2, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, algByte uint8, ops []byte) {
		algs := core.Algorithms()
		alg := algs[int(algByte)%len(algs)]
		limits := []core.Limit{core.PerSecond(3), core.Every(5, 7*time.Second)}
		states := make([]core.State, 2)
		now := epochUS
		for len(ops) >= 4 {
			now += int64(binary.BigEndian.Uint16(ops)) * 1000
			cost := int64(ops[2] % 5)
			ops = ops[4:]
			var each [2]bool
			alone := make([]core.State, 2)
			for i := range limits {
				alone[i] = clone(states[i])
				d, err := applyMicros(alg, &alone[i], limits[i], cost, now)
				must.NoError(t, err)
				each[i] = d.Allowed
			}
			before := []core.State{clone(states[0]), clone(states[1])}
			d, err := alg.ApplyAll(states, limits, cost, now)
			must.NoError(t, err)
			must.Equal(t, each[0] && each[1], d.Allowed)
			if d.Allowed {
				must.Equal(t, alone, states, "admitted, each state moves as under its limit alone")
			}
			if !d.Allowed {
				must.Equal(t, before, states)
				must.Positive(t, d.RetryAfter)
				must.False(t, each[d.Index], "the governing limit is one that denies")
			}
		}
	})
}
