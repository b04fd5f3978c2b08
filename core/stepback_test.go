package core_test

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// drained spends a whole 10/s quota at now and returns the state.
func drained(t *testing.T, alg core.Algorithm, l core.Limit, now int64) core.State {
	t.Helper()
	var s core.State
	d, err := applyMicros(alg, &s, l, l.Rate, now)
	must.NoError(t, err)
	must.True(t, d.Allowed)
	return s
}

// A key drained at T whose clock then reads T - back: no quota is minted at
// the step, and the key recovers at its normal pace from the new now (a
// meter admits one request an emission interval later), never after the
// size of the step.
func TestClockStepsBack(t *testing.T) {
	l, now := core.PerSecond(10), hms(5, 0, 0)+350_000
	backs := []time.Duration{time.Microsecond, 40 * time.Millisecond, 900 * time.Millisecond, time.Hour, 24 * 365 * time.Hour}
	for _, alg := range core.Algorithms() {
		for _, back := range backs {
			t.Run(alg.String()+"/"+back.String(), func(t *testing.T) {
				s := drained(t, alg, l, now)
				at := now - us(back)
				d, err := applyMicros(alg, &s, l, 1, at)
				must.NoError(t, err)
				must.False(t, d.Allowed, "no quota minted at the step")
				expect.LessOrEqual(t, d.RetryAfter, 2*l.Period, "recovers within two periods, not after the step")
				if alg.OneWord() {
					expect.Equal(t, l.EmissionInterval(), d.RetryAfter, "an empty meter at the new now")
				}
				got := admittedOver(t, alg, &s, l, at, at+us(d.RetryAfter)+us(l.Period))
				expect.Positive(t, got, "the key recovers after Retry-After")
				expect.LessOrEqual(t, got, l.Rate+1, "at most a period's worth (and the boundary) after the step")
			})
		}
	}
}

// admittedOver sends one request every millisecond from..to and counts the
// admitted, checking every decision.
func admittedOver(t *testing.T, alg core.Algorithm, s *core.State, l core.Limit, from, to int64) int64 {
	t.Helper()
	var n int64
	for at := from; at < to; at += 1000 {
		b := clone(*s)
		d, err := applyMicros(alg, s, l, 1, at)
		must.NoError(t, err)
		checkDecision(t, alg, b, clone(*s), l, 1, at, d)
		if d.Allowed {
			n++
		}
	}
	return n
}

// A step back within what real history can leave keeps today's behaviour: a
// meter half drained at T, asked at T - 10 ms, refills nothing until the
// clock passes T again.
func TestClockSmallStepKeepsState(t *testing.T) {
	l, now := core.PerSecond(10), hms(5, 0, 0)
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		t.Run(alg.String(), func(t *testing.T) {
			var s core.State
			_, err := applyMicros(alg, &s, l, 5, now)
			must.NoError(t, err)
			before := s
			d, err := applyMicros(alg, &s, l, 0, now-10_000)
			must.NoError(t, err)
			expect.Equal(t, int64(4), d.Remaining, "no refill until the clock catches up: T is 510 ms ahead")
			expect.Equal(t, before, s)
		})
	}
}

// A peek reads state as rebased but writes nothing; a spend that is denied
// writes the rebase, so the key recovers from the step rather than from
// every later request.
func TestClockStepPeekAndDenial(t *testing.T) {
	l, now := core.PerSecond(10), hms(5, 0, 0)
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := drained(t, alg, l, now)
			at := now - us(time.Hour)
			before := clone(s)
			peek, err := applyMicros(alg, &s, l, 0, at)
			must.NoError(t, err)
			expect.Equal(t, before, s, "a peek writes nothing")
			d, err := applyMicros(alg, &s, l, 1, at)
			must.NoError(t, err)
			must.False(t, d.Allowed)
			expect.NotEqual(t, before, s, "a denied spend rebases")
			again, err := applyMicros(alg, &s, l, 0, at)
			must.NoError(t, err)
			expect.Equal(t, peek, again, "the peek saw the rebased state")
		})
	}
}

// A refund on state a clock step left in the future never mints: the key
// holds no more than a fresh one.
func TestClockStepRefund(t *testing.T) {
	l, now := core.PerSecond(10), hms(5, 0, 0)+350_000
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := drained(t, alg, l, now)
			at := now - us(time.Hour)
			req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}, Cost: -3, Now: time.UnixMicro(at), Admitted: time.UnixMicro(now)}
			states := []core.State{s}
			var d core.Decision
			must.NoError(t, req.Decide(&d, states, at))
			expect.LessOrEqual(t, d.Remaining, int64(3), "at most what was given back")
			s = states[0]
			got := admittedOver(t, alg, &s, l, at, at+1000)
			expect.LessOrEqual(t, got, int64(3), "no more than the refund admits at once")
		})
	}
}

// The one-word path (AdvanceWord, for lock-free stores) rebases as Decide
// does: a denied spend swaps in an empty meter at now, a peek swaps nothing,
// and a refund starts from the rebased state.
func TestAdvanceWordRebases(t *testing.T) {
	l, now := core.PerSecond(10), hms(5, 0, 0)
	tau := us(time.Second)
	future := now + us(time.Hour)
	cases := []struct {
		name string
		cost int64
		t    int64
		want int64
	}{
		{"denied spend rebases", 1, future, now + tau},
		{"oversized spend rebases", 11, future, now + tau},
		{"peek leaves it", 0, future, future},
		{"refund gives back from the rebased state", -2, future, now + tau - 2*us(l.EmissionInterval())},
		{"within the bound: untouched", 1, now + tau, now + tau},
		{"within the bound, admitted", 1, now + tau - 100_000, now + tau},
	}
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		for _, c := range cases {
			t.Run(alg.String()+"/"+c.name, func(t *testing.T) {
				req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}, Cost: c.cost, Now: time.UnixMicro(now)}
				got := req.AdvanceWord(c.t, now)
				expect.Equal(t, c.want, got)
				var d core.Decision
				states := []core.State{{T: c.t}}
				must.NoError(t, req.Decide(&d, states, now))
				expect.Equal(t, got, states[0].T, "Decide leaves what AdvanceWord swaps in")
			})
		}
	}
}
