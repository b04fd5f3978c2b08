package core_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// epochUS is 2026-01-01 00:00:00 UTC in microseconds: a whole day, so every window
// of a second, minute or hour starts on it.
const epochUS = int64(1_767_225_600_000_000)

// hms is epochUS plus h hours, m minutes and s seconds, in microseconds.
func hms(h, m, s int64) int64 { return epochUS + ((h*60+m)*60+s)*1_000_000 }

// us converts a duration to microseconds.
func us(d time.Duration) int64 { return d.Microseconds() }

// clone deep-copies s, so that a later Apply writing into s's log cannot change
// the copy.
func clone(s core.State) core.State {
	s.Log = slices.Clone(s.Log)
	return s
}

// admitted reports whether a request of cost would be admitted at now, on a copy
// of s.
func admitted(t *testing.T, alg core.Algorithm, s core.State, l core.Limit, cost, now int64) bool {
	t.Helper()
	c := clone(s)
	d, err := applyMicros(alg, &c, l, cost, now)
	must.NoError(t, err)
	return d.Allowed
}

// checkDecision checks what every decision promises about itself, against the
// state s it was made on (before the request): RetryAfter is 0 when admitted
// and otherwise exactly the first instant the same request is admitted;
// Remaining is exactly the largest cost admitted now (after this request, when
// admitted). It needs time to go no further back than MaxTime allows.
func checkDecision(t *testing.T, alg core.Algorithm, before, after core.State, l core.Limit, cost, now int64, d core.Decision) {
	t.Helper()
	must.GreaterOrEqual(t, d.Remaining, int64(0))
	must.GreaterOrEqual(t, d.ResetAfter, time.Duration(0))
	if d.Allowed {
		must.Zero(t, d.RetryAfter)
		must.False(t, d.Exceeds)
	} else {
		must.Positive(t, d.RetryAfter)
		must.Zero(t, d.Delay)
		requireSameView(t, alg, before, after, l, now)
	}
	if alg != core.LeakyBucket {
		must.Zero(t, d.Delay)
	}
	capacity := alg.Capacity(l)
	must.Equal(t, cost > capacity, d.Exceeds)
	if !d.Allowed && !d.Exceeds {
		retry := us(d.RetryAfter)
		// after is before as the denial left it: rebased, if at all.
		must.False(t, admitted(t, alg, after, l, cost, now+retry-1), "retry-after %s is too early", d.RetryAfter)
		must.True(t, admitted(t, alg, after, l, cost, now+retry), "retry-after %s is too late", d.RetryAfter)
	}
	if d.Remaining > 0 {
		must.True(t, admitted(t, alg, after, l, d.Remaining, now), "remaining %d does not fit", d.Remaining)
	}
	if d.Remaining < capacity {
		must.False(t, admitted(t, alg, after, l, d.Remaining+1, now), "remaining %d is too low", d.Remaining)
	}
}

// applyMicros decides one request under one limit, updating s when it is
// admitted: Algorithm.ApplyAll with one state and one limit.
func applyMicros(alg core.Algorithm, s *core.State, l core.Limit, cost, now int64) (core.Decision, error) {
	states := [1]core.State{*s}
	d, err := alg.ApplyAll(states[:], []core.Limit{l}, cost, now)
	*s = states[0]
	return d, err
}

// applyAt is applyMicros at a time.Time.
func applyAt(alg core.Algorithm, s *core.State, l core.Limit, cost int64, now time.Time) (core.Decision, error) {
	return applyMicros(alg, s, l, cost, core.Micros(now))
}

// freshAt is TakeRequest.FreshAt for one state under one limit.
func freshAt(alg core.Algorithm, s *core.State, l core.Limit) int64 {
	req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}}
	return req.FreshAt([]core.State{*s})
}

// requireSameView checks that after decides every request at now exactly as
// before does: a denied request changes nothing, but for a spend rebasing
// state a clock that stepped back left in the future, which is invisible at
// now (and, by design, lets the key recover from now: stepback_test.go).
func requireSameView(t *testing.T, alg core.Algorithm, before, after core.State, l core.Limit, now int64) {
	t.Helper()
	if reflect.DeepEqual(before, after) {
		return
	}
	for _, cost := range []int64{0, 1, 2} {
		b, a := clone(before), clone(after)
		db, err := applyMicros(alg, &b, l, cost, now)
		must.NoError(t, err)
		da, err := applyMicros(alg, &a, l, cost, now)
		must.NoError(t, err)
		must.Equal(t, db, da, "a denied request changes nothing but a rebase (cost %d)", cost)
	}
	// A cost above the capacity is always denied, so it writes the rebase only.
	rebased := clone(before)
	_, err := applyMicros(alg, &rebased, l, alg.Capacity(l)+1, now)
	must.NoError(t, err)
	must.Equal(t, rebased, after, "the denial wrote the rebase and nothing else")
}
