package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// twoSpent returns alg's state under l after two admissions of 1 at now: a
// state with some spending in it, for the edge cases every algorithm handles
// the same way.
func twoSpent(t *testing.T, alg core.Algorithm, l core.Limit, now int64) core.State {
	t.Helper()
	var s core.State
	for range 2 {
		d, err := applyMicros(alg, &s, l, 1, now)
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
	return s
}

// A peek changes nothing; a negative cost is an error; a cost above the
// capacity is denied and spends nothing.
func TestApplyPeekAndCosts(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			l, now := core.PerSecond(4), hms(5, 0, 0)
			s := twoSpent(t, alg, l, now)
			before := clone(s)

			t.Run("peek", func(t *testing.T) {
				d, err := applyMicros(alg, &s, l, 0, now)
				must.NoError(t, err)
				expect.True(t, d.Allowed)
				expect.Equal(t, int64(2), d.Remaining)
				expect.Equal(t, before, s)
				var fresh core.State
				d, err = applyMicros(alg, &fresh, l, 0, now)
				must.NoError(t, err)
				expect.Equal(t, core.Decision{Allowed: true, Remaining: 4, Limit: l}, d)
				expect.Equal(t, core.State{}, fresh)
			})
			t.Run("negative cost", func(t *testing.T) {
				for _, c := range []int64{-1, math.MinInt64} {
					d, err := applyMicros(alg, &s, l, c, now)
					must.ErrorIs(t, err, core.ErrInvalidCost)
					expect.Equal(t, core.Decision{}, d)
					expect.Equal(t, before, s)
				}
			})
			t.Run("cost above capacity", func(t *testing.T) {
				for _, c := range []int64{5, 1 << 40, math.MaxInt64} {
					d, err := applyMicros(alg, &s, l, c, now)
					must.NoError(t, err)
					expect.False(t, d.Allowed)
					expect.True(t, d.Exceeds)
					expect.Equal(t, int64(2), d.Remaining)
					expect.Equal(t, time.Second, d.RetryAfter)
					expect.Equal(t, before, s)
				}
			})
		})
	}
}

// Bad times, algorithms and limits are errors that change nothing; a clock
// that jumps a year forward finds the key fresh.
func TestApplyRejects(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			l, now := core.PerSecond(4), hms(5, 0, 0)
			s := twoSpent(t, alg, l, now)
			before := clone(s)

			t.Run("time out of range", func(t *testing.T) {
				for _, at := range []int64{-1, math.MinInt64, core.MaxTime + 1, math.MaxInt64} {
					d, err := applyMicros(alg, &s, l, 1, at)
					must.ErrorIs(t, err, core.ErrClock)
					expect.Equal(t, core.Decision{}, d)
					expect.Equal(t, before, s)
				}
			})
			t.Run("invalid algorithm and limit", func(t *testing.T) {
				_, err := applyMicros(core.Algorithm(0), &s, l, 1, now)
				must.ErrorIs(t, err, core.ErrInvalidAlgorithm)
				_, err = applyMicros(core.Algorithm(7), &s, l, 1, now)
				must.ErrorIs(t, err, core.ErrInvalidAlgorithm)
				for _, bad := range []core.Limit{{}, core.PerSecond(-1), core.Every(1, -time.Second),
					core.Every(1, 1500*time.Nanosecond), core.PerSecond(2).WithBurst(-1), core.Every(2, time.Microsecond)} {
					_, err = applyMicros(alg, &s, bad, 1, now)
					must.ErrorIs(t, err, core.ErrInvalidLimit, "%+v", bad)
				}
				expect.Equal(t, before, s)
			})
			t.Run("clock jumps a year forward", func(t *testing.T) {
				s := clone(before)
				at := now + us(366*24*time.Hour)
				d, err := applyMicros(alg, &s, l, 1, at)
				must.NoError(t, err)
				expect.True(t, d.Allowed)
				expect.Equal(t, int64(3), d.Remaining)
				d, err = applyMicros(alg, &s, l, 3, at)
				must.NoError(t, err)
				expect.True(t, d.Allowed)
				d, err = applyMicros(alg, &s, l, 1, at)
				must.NoError(t, err)
				expect.False(t, d.Allowed)
			})
		})
	}
}

// Near MaxTime the algorithms still decide (clock steps back: stepback_test.go).
func TestApplyClockEdges(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			l := core.PerSecond(4)
			t.Run("near MaxTime", func(t *testing.T) {
				var s core.State
				end := core.MaxTime
				got := 0
				for i := range int64(20) {
					at := end - 2_000_000 + i*100_000
					b := clone(s)
					d, err := applyMicros(alg, &s, l, 1, at)
					must.NoError(t, err)
					checkDecision(t, alg, b, clone(s), l, 1, at, d)
					if d.Allowed {
						got++
					}
				}
				expect.LessOrEqual(t, got, 12, "at most 4 + 4/s x 1.9 s")
				d, err := applyMicros(alg, &s, l, math.MaxInt64, end)
				must.NoError(t, err)
				expect.True(t, d.Exceeds)
			})
		})
	}
}

func TestApplyUsesTime(t *testing.T) {
	l := core.PerSecond(1)
	var a, b core.State
	now := time.UnixMicro(hms(0, 0, 0))
	da, err := applyAt(core.GCRA, &a, l, 1, now)
	must.NoError(t, err)
	db, err := applyMicros(core.GCRA, &b, l, 1, core.Micros(now))
	must.NoError(t, err)
	expect.Equal(t, da, db)
	expect.Equal(t, a, b)
	_, err = applyAt(core.GCRA, &a, l, 1, time.Unix(-1, 0))
	must.ErrorIs(t, err, core.ErrClock)
}

func TestApplyAll(t *testing.T) {
	perSec := core.PerSecond(2)
	perMin := core.PerMinute(3)
	limits := []core.Limit{perSec, perMin}
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			states := make([]core.State, 2)
			now := hms(6, 0, 0)
			apply := func(cost, at int64) core.Decision {
				t.Helper()
				d, err := alg.ApplyAll(states, limits, cost, at)
				must.NoError(t, err)
				return d
			}
			// Both allow: the per-second limit has the least remaining (1 < 2).
			d := apply(1, now)
			expect.True(t, d.Allowed)
			expect.Equal(t, 0, d.Index)
			expect.Equal(t, perSec, d.Limit)
			expect.Equal(t, int64(1), d.Remaining)
			// Now both have 1 left: a tie goes to the first.
			d = apply(1, now)
			expect.True(t, d.Allowed)
			expect.Equal(t, 0, d.Index)
			expect.Equal(t, int64(0), d.Remaining)

			// The per-second limit denies; the per-minute one would admit,
			// but a denial spends from neither.
			snap := []core.State{clone(states[0]), clone(states[1])}
			d = apply(1, now)
			expect.False(t, d.Allowed)
			expect.Equal(t, 0, d.Index)
			expect.Equal(t, perSec, d.Limit)
			expect.Equal(t, snap, states)

			applyAllLater(t, apply, states, perMin, now+us(2*time.Second))
		})
	}
}

// applyAllLater is TestApplyAll two seconds on, with states as it left them.
func applyAllLater(t *testing.T, apply func(cost, at int64) core.Decision, states []core.State, perMin core.Limit, later int64) {
	t.Helper()
	// Two seconds later (the sliding window's previous second must have
	// decayed) the per-second limit admits, and its remaining (1) is
	// more than the per-minute one's (0): the per-minute one governs.
	d := apply(1, later)
	expect.True(t, d.Allowed)
	expect.Equal(t, 1, d.Index)
	expect.Equal(t, perMin, d.Limit)
	expect.Equal(t, int64(0), d.Remaining)

	// Both deny with cost 2: the per-minute one's wait is the longer.
	snap := []core.State{clone(states[0]), clone(states[1])}
	d = apply(2, later)
	expect.False(t, d.Allowed)
	expect.Equal(t, 1, d.Index)
	expect.Positive(t, d.RetryAfter)
	expect.Equal(t, snap, states)

	// Cost 3 exceeds the per-second capacity of 2: that limit governs
	// whatever the other's wait, since no wait will do.
	d = apply(3, later)
	expect.False(t, d.Allowed)
	expect.True(t, d.Exceeds)
	expect.Equal(t, 0, d.Index)
	expect.Equal(t, snap, states)

	// A peek changes nothing.
	d = apply(0, later)
	expect.Equal(t, snap, states)
	expect.Equal(t, int64(0), d.Remaining)
}

func TestApplyAllErrors(t *testing.T) {
	ok := core.PerSecond(1)
	states := make([]core.State, 2)
	tests := []struct {
		name   string
		states []core.State
		limits []core.Limit
		cost   int64
		now    int64
		err    error
	}{
		{"no limits", nil, nil, 1, epochUS, core.ErrInvalidLimit},
		{"fewer states", states[:1], []core.Limit{ok, ok}, 1, epochUS, core.ErrInvalidLimit},
		{"second limit invalid", states, []core.Limit{ok, core.PerSecond(0)}, 1, epochUS, core.ErrInvalidLimit},
		{"negative cost", states, []core.Limit{ok, ok}, -1, epochUS, core.ErrInvalidCost},
		{"time", states, []core.Limit{ok, ok}, 1, -5, core.ErrClock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := core.GCRA.ApplyAll(tt.states, tt.limits, tt.cost, tt.now)
			must.ErrorIs(t, err, tt.err)
			expect.Equal(t, core.Decision{}, d)
			expect.Equal(t, make([]core.State, 2), states)
		})
	}
	_, err := core.Algorithm(9).ApplyAll(states, []core.Limit{ok, ok}, 1, epochUS)
	must.ErrorIs(t, err, core.ErrInvalidAlgorithm)
}

// More limits than ApplyAll keeps on its stack still decide: the tightest governs.
func TestApplyAllManyLimits(t *testing.T) {
	var limits []core.Limit
	for i := range int64(10) {
		limits = append(limits, core.PerSecond(20-i))
	}
	states := make([]core.State, len(limits))
	for i := range 11 {
		d, err := core.FixedWindow.ApplyAll(states, limits, 1, epochUS)
		must.NoError(t, err)
		expect.Equal(t, i < 11, d.Allowed)
		expect.Equal(t, 9, d.Index)
	}
	d, err := core.FixedWindow.ApplyAll(states, limits, 1, epochUS)
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	expect.Equal(t, 9, d.Index)
	for i := range states {
		expect.Equal(t, int64(11), states[i].N)
	}
}

func TestAlgorithmNames(t *testing.T) {
	for _, alg := range core.Algorithms() {
		got, err := core.ParseAlgorithm(alg.String())
		must.NoError(t, err)
		expect.Equal(t, alg, got)
		must.NoError(t, alg.Validate())
	}
	got, err := core.ParseAlgorithm(" Sliding_Window ")
	must.NoError(t, err)
	expect.Equal(t, core.SlidingWindow, got)
	for _, bad := range []string{"", "bucket", "gcra2"} {
		_, err := core.ParseAlgorithm(bad)
		must.ErrorIs(t, err, core.ErrInvalidAlgorithm)
	}
	expect.Equal(t, "Algorithm(0)", core.Algorithm(0).String())
	must.ErrorIs(t, core.Algorithm(7).Validate(), core.ErrInvalidAlgorithm)
}

func TestCapacityAndValidateLimit(t *testing.T) {
	l := core.PerSecond(10).WithBurst(25)
	for _, alg := range core.Algorithms() {
		oneWord := alg == core.TokenBucket || alg == core.LeakyBucket || alg == core.GCRA
		expect.Equal(t, oneWord, alg.OneWord(), alg.String())
		if oneWord {
			expect.Equal(t, int64(25), alg.Capacity(l))
			must.NoError(t, alg.ValidateLimit(l))
		} else {
			expect.Equal(t, int64(10), alg.Capacity(l))
			err := alg.ValidateLimit(l)
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.Contains(t, err.Error(), "takes no burst")
			must.NoError(t, alg.ValidateLimit(core.PerSecond(10)))
		}
	}
	err := core.SlidingLog.ValidateLimit(core.PerSecond(core.MaxLogRate + 1))
	must.ErrorIs(t, err, core.ErrInvalidLimit)
	must.NoError(t, core.SlidingLog.ValidateLimit(core.PerSecond(core.MaxLogRate)))
	must.ErrorIs(t, core.Algorithm(0).ValidateLimit(core.PerSecond(1)), core.ErrInvalidAlgorithm)
}

// FreshAt is the instant from which a state decides as a fresh one would.
func TestFreshAt(t *testing.T) {
	l := core.PerSecond(4)
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			var s core.State
			expect.Zero(t, freshAt(alg, &s, l))
			now := hms(7, 0, 0) + 300_000
			for range 3 {
				_, err := applyMicros(alg, &s, l, 1, now)
				must.NoError(t, err)
			}
			at := freshAt(alg, &s, l)
			must.Greater(t, at, now)
			var fresh core.State
			for _, dt := range []int64{0, 1, 250_000, 1_000_000, 3_000_000} {
				a := clone(s)
				da, err := applyMicros(alg, &a, l, 4, at+dt)
				must.NoError(t, err)
				f := fresh
				df, err := applyMicros(alg, &f, l, 4, at+dt)
				must.NoError(t, err)
				expect.Equal(t, df.Allowed, da.Allowed)
				expect.Equal(t, df.Remaining, da.Remaining)
			}
		})
	}
}
