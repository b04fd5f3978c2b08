package core_test

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// step is one request of a scripted timeline and the decision it must get
// (Limit is filled in by the runner).
type step struct {
	at   int64 // µs since the epoch
	cost int64
	want core.Decision
}

func allow(remaining int64, reset time.Duration) core.Decision {
	return core.Decision{Allowed: true, Remaining: remaining, ResetAfter: reset}
}

func deny(remaining int64, reset, retry time.Duration) core.Decision {
	return core.Decision{Remaining: remaining, ResetAfter: reset, RetryAfter: retry}
}

// runTimeline applies steps in order to one state and checks every decision
// field, plus the decision's promises about itself.
func runTimeline(t *testing.T, alg core.Algorithm, l core.Limit, s *core.State, steps []step) {
	t.Helper()
	for i, st := range steps {
		before := clone(*s)
		d, err := applyMicros(alg, s, l, st.cost, st.at)
		must.NoError(t, err)
		want := st.want
		want.Limit = l
		must.Equal(t, want, d, "step %d at %s", i, time.Duration(st.at-epochUS)*time.Microsecond)
		checkDecision(t, alg, before, clone(*s), l, st.cost, st.at, d)
	}
}

// Seed 003: 7 per minute, 5 requests in the previous minute and 3 in the
// current one (the new request being the third, as the seed's "the limit will
// be reached after one more request" implies), arriving at 30% of the current
// minute: 3 + 5 x 0.7 = 6.5 <= 7, allowed. One more at the same instant makes
// 7.5: denied.
func TestSlidingWindowSeed003(t *testing.T) {
	l := core.PerMinute(7)
	start := hms(1, 1, 0)
	s := core.State{T: start, N: 2, P: 5}
	at := start + us(18*time.Second) // 30% into the window
	runTimeline(t, core.SlidingWindow, l, &s, []step{
		// Remaining floor(7 - 6.5) = 0; the window's 3 requests have fully
		// decayed 2 periods after its start: 102 s from now.
		{at, 1, allow(0, 102*time.Second)},
		// 5 x (60-e)/60 + 3 + 1 <= 7 from e = 24 s on: in 6 s.
		{at, 1, deny(0, 102*time.Second, 6*time.Second)},
		{start + us(24*time.Second), 1, allow(0, 96*time.Second)},
	})
	expect.Equal(t, core.State{T: start, N: 4, P: 5}, s)

	// Reading the seed's 3 as already admitted, the new request makes 7.5.
	s = core.State{T: start, N: 3, P: 5}
	d, err := applyMicros(core.SlidingWindow, &s, l, 1, at)
	must.NoError(t, err)
	expect.False(t, d.Allowed)
}

// Seed 001 (with its arithmetic fixed, as the seeds' README says): 10 per
// minute, 9 requests in the previous minute and 5 in the current one (the new
// request the fifth) at 25%: 9 x 0.75 + 5 = 11.75 > 10, denied.
func TestSlidingWindowSeed001(t *testing.T) {
	l := core.PerMinute(10)
	start := hms(0, 1, 0)
	s := core.State{T: start, N: 4, P: 9}
	at := start + us(15*time.Second)
	runTimeline(t, core.SlidingWindow, l, &s, []step{
		// 9 x (60-e)/60 + 5 <= 10 from e = 26.666667 s (rounded up to the µs).
		{at, 1, deny(0, 105*time.Second, 11_666_667*time.Microsecond)},
		{at + 11_666_667, 1, allow(0, 105*time.Second-11_666_667*time.Microsecond)},
	})
	expect.Equal(t, core.State{T: start, N: 5, P: 9}, s)
}

// Seed 003's figure 4-6: a bucket of 4 refilled with 4 tokens per minute. The
// figure refills 4 at once each minute; ours refills continuously, one token
// every 15 s, with no rounding loss, which the timeline shows.
func TestTokenBucketSeed003(t *testing.T) {
	l := core.PerMinute(4)
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA} {
		t.Run(alg.String(), func(t *testing.T) {
			var s core.State
			runTimeline(t, alg, l, &s, []step{
				{hms(1, 0, 0), 1, allow(3, 15*time.Second)},
				{hms(1, 0, 5), 1, allow(2, 25*time.Second)}, // 2.33 tokens left
				{hms(1, 0, 5), 1, allow(1, 40*time.Second)},
				{hms(1, 0, 5), 1, allow(0, 55*time.Second)}, // empty: full again at 1:01:00
				// 0.67 of a token; the next whole one at 1:00:15.
				{hms(1, 0, 10), 1, deny(0, 50*time.Second, 5*time.Second)},
				{hms(1, 0, 15), 1, allow(0, 60*time.Second)},
				{hms(1, 0, 20), 1, deny(0, 55*time.Second, 10*time.Second)},
				{hms(1, 0, 20), 2, deny(0, 55*time.Second, 25*time.Second)},
				{hms(1, 1, 0), 1, allow(2, 30*time.Second)},
				{hms(1, 2, 0), 1, allow(3, 15*time.Second)}, // full again, and never above 4
				{hms(1, 2, 0), 3, allow(0, 60*time.Second)},
			})
		})
	}
}

// Seed 003's sliding log, 2 per minute, with our rule that denied requests are
// not logged: at 1:01:40 the entries at or before 1:00:40 have left, so the log
// holds nothing and the request is allowed (the seed, logging the denied
// 1:00:50, still allows it with two entries).
func TestSlidingLogSeed003(t *testing.T) {
	l := core.PerMinute(2)
	var s core.State
	runTimeline(t, core.SlidingLog, l, &s, []step{
		{hms(1, 0, 1), 1, allow(1, 60*time.Second)},
		{hms(1, 0, 30), 1, allow(0, 60*time.Second)},
		// Full until 1:00:01's entry leaves at 1:01:01; empty at 1:01:30.
		{hms(1, 0, 50), 1, deny(0, 40*time.Second, 11*time.Second)},
		{hms(1, 1, 40), 1, allow(1, 60*time.Second)},
		{hms(1, 1, 40), 1, allow(0, 60*time.Second)},
		{hms(1, 1, 41), 1, deny(0, 59*time.Second, 59*time.Second)},
	})
	expect.Equal(t, int64(2), s.N)
}

// A fixed window of 5 per minute lets 10 through in one second across a
// window boundary: inherent to the algorithm.
func TestFixedWindowBoundary(t *testing.T) {
	l := core.PerMinute(5)
	var s core.State
	var steps []step
	for i := range int64(5) {
		steps = append(steps, step{hms(2, 0, 59), 1, allow(4-i, time.Second)})
	}
	steps = append(steps, step{hms(2, 0, 59), 1, deny(0, time.Second, time.Second)})
	for i := range int64(5) {
		steps = append(steps, step{hms(2, 1, 0), 1, allow(4-i, time.Minute)})
	}
	steps = append(steps, step{hms(2, 1, 0), 1, deny(0, time.Minute, time.Minute)})
	runTimeline(t, core.FixedWindow, l, &s, steps)
	expect.Equal(t, core.State{T: hms(2, 1, 0), N: 5}, s)
}

// The leaky bucket's queue: admitted requests leave one emission interval
// apart, a queue of Burst, and a request that would overflow it is denied.
func TestLeakyBucketQueue(t *testing.T) {
	l := core.PerSecond(10).WithBurst(3)
	ms := time.Millisecond
	queued := func(remaining int64, reset, delay time.Duration) core.Decision {
		d := allow(remaining, reset)
		d.Delay = delay
		return d
	}
	var s core.State
	at := hms(3, 0, 0)
	runTimeline(t, core.LeakyBucket, l, &s, []step{
		{at, 1, queued(2, 100*ms, 0)},
		{at, 1, queued(1, 200*ms, 100*ms)},
		{at, 1, queued(0, 300*ms, 200*ms)},
		{at, 1, deny(0, 300*ms, 100*ms)},                // the queue is full
		{at + us(50*ms), 1, deny(0, 250*ms, 50*ms)},     // still full
		{at + us(100*ms), 1, queued(0, 300*ms, 200*ms)}, // the first has left
		{at + us(100*ms), 0, queued(0, 300*ms, 300*ms)}, // a peek: the next slot
		{at + us(400*ms), 2, queued(1, 200*ms, 0)},      // drained: cost 2 takes two slots
		{at + us(400*ms), 1, queued(0, 300*ms, 200*ms)},
	})
}

// The sliding log's RetryAfter waits for as many entries to leave as the cost
// needs, and a cost of n logs n entries.
func TestSlidingLogCost(t *testing.T) {
	l := core.PerMinute(3)
	var s core.State
	runTimeline(t, core.SlidingLog, l, &s, []step{
		{hms(0, 0, 0), 1, allow(2, time.Minute)},
		{hms(0, 0, 10), 1, allow(1, time.Minute)},
		{hms(0, 0, 20), 1, allow(0, time.Minute)},
		// Cost 2 needs the two oldest gone: the 0:00:10 entry leaves at 0:01:10.
		{hms(0, 0, 30), 2, deny(0, 50*time.Second, 40*time.Second)},
		{hms(0, 1, 10), 2, allow(0, time.Minute)},
		{hms(0, 1, 10), 0, allow(0, time.Minute)},
	})
	expect.Equal(t, []int64{hms(0, 0, 20), hms(0, 1, 10), hms(0, 1, 10)}, liveLog(s))
	// Once 0:00:20 has left, a peek and a denial see it gone but leave the
	// State as it was (runTimeline compares it); the next admission drops it.
	runTimeline(t, core.SlidingLog, l, &s, []step{
		{hms(0, 1, 25), 0, allow(1, 45*time.Second)},
		{hms(0, 1, 25), 2, deny(1, 45*time.Second, 45*time.Second)},
		{hms(0, 1, 25), 4, core.Decision{Exceeds: true, Remaining: 1, ResetAfter: 45 * time.Second, RetryAfter: time.Minute}},
	})
	expect.Equal(t, int64(3), s.N)
	runTimeline(t, core.SlidingLog, l, &s, []step{{hms(0, 1, 25), 1, allow(0, time.Minute)}})
	expect.Equal(t, []int64{hms(0, 1, 10), hms(0, 1, 10), hms(0, 1, 25)}, liveLog(s))
}

// liveLog lists a sliding log's entries, oldest first.
func liveLog(s core.State) []int64 {
	out := make([]int64, 0, s.N)
	for i := range int(s.N) {
		out = append(out, s.Log[(s.Head+i)%len(s.Log)])
	}
	return out
}
