package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// spendN spends one at a time under l at now, n times, requiring each to be
// admitted.
func spendN(t *testing.T, alg core.Algorithm, s *core.State, l core.Limit, n int, now int64) {
	t.Helper()
	for i := range n {
		d, err := applyMicros(alg, s, l, 1, now)
		must.NoError(t, err)
		must.True(t, d.Allowed, "spend %d of %d under %s", i+1, n, l)
	}
}

// admitsAt counts the spends of one admitted at now, up to 1,000.
func admitsAt(t *testing.T, alg core.Algorithm, s *core.State, l core.Limit, now int64) int {
	t.Helper()
	for n := range 1000 {
		d, err := applyMicros(alg, s, l, 1, now)
		must.NoError(t, err)
		if !d.Allowed {
			return n
		}
	}
	return 1000
}

// edited spends n under from at now, re-expresses the state under to, and
// returns it.
func edited(t *testing.T, alg core.Algorithm, from, to core.Limit, n int, now int64) core.State {
	t.Helper()
	var s [1]core.State
	spendN(t, alg, &s[0], from, n, now)
	req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{to}}
	req.Reexpress(s[:], []core.Limit{from}, now)
	return s[0]
}

// An edit keeps what a client used, for every algorithm: 5/h with 3 spent,
// raised to 10/h, admits exactly 7 more; 10/h with 7 spent, cut to 5/h,
// admits none, and never more than 5 in the hour after.
func TestReexpressKeepsWhatWasUsed(t *testing.T) {
	now := hms(10, 17, 3)
	for _, alg := range core.Algorithms() {
		t.Run(alg.String()+"/up", func(t *testing.T) {
			s := edited(t, alg, core.PerHour(5), core.PerHour(10), 3, now)
			expect.Equal(t, 7, admitsAt(t, alg, &s, core.PerHour(10), now))
		})
		t.Run(alg.String()+"/down", func(t *testing.T) {
			s := edited(t, alg, core.PerHour(10), core.PerHour(5), 7, now)
			expect.Equal(t, 0, admitsAt(t, alg, &s, core.PerHour(5), now), "7 spent is over the new 5")
			hour, later := 0, 0
			for m := int64(1); m <= 120; m++ {
				n := admitsAt(t, alg, &s, core.PerHour(5), now+m*us(time.Minute))
				if m <= 60 {
					hour += n
				} else {
					later += n
				}
			}
			expect.LessOrEqual(t, hour, 5, "at most the new limit in the hour after")
			expect.Positive(t, hour+later, "the key recovers")
		})
	}
}

// A meter keeps the requests it owes, in the new interval: GCRA 10/h with 7
// spent owes 42 minutes; under 5/h that is 7 intervals of 12 minutes, cut to
// the new burst's hour, so the next request fits 12 minutes later, not 42.
func TestReexpressMeterTimeOwed(t *testing.T) {
	now := hms(10, 0, 0)
	s := edited(t, core.GCRA, core.PerHour(10), core.PerHour(5), 7, now)
	expect.Equal(t, now+us(time.Hour), s.T, "the time owed is cut to the new tau")
	expect.Equal(t, 0, admitsAt(t, core.GCRA, &s, core.PerHour(5), now+us(12*time.Minute)-1))
	expect.Equal(t, 1, admitsAt(t, core.GCRA, &s, core.PerHour(5), now+us(12*time.Minute)))

	s = edited(t, core.GCRA, core.PerHour(5), core.PerHour(60), 2, now) // owes 24 min = 2 requests
	expect.Equal(t, now+us(2*time.Minute), s.T, "2 requests owed become 2 minutes at 60/h")

	// A burst cut only caps the time owed, at the next spend: 42 minutes
	// owed read as the new 18 (an empty bucket of 3), and the denied spend
	// writes them so; one request fits 6 minutes later.
	cut := core.PerHour(10).WithBurst(3)
	s = edited(t, core.TokenBucket, core.PerHour(10), cut, 7, now)
	expect.Equal(t, 0, admitsAt(t, core.TokenBucket, &s, cut, now))
	early := clone(s)
	expect.Equal(t, 0, admitsAt(t, core.TokenBucket, &early, cut, now+us(6*time.Minute)-1))
	expect.Equal(t, 1, admitsAt(t, core.TokenBucket, &s, cut, now+us(6*time.Minute)))
}

// A window whose period changed carries its count into the new window
// holding now; the sliding window carries its estimate.
func TestReexpressWindowPeriodChange(t *testing.T) {
	now := hms(10, 30, 0)
	s := edited(t, core.FixedWindow, core.PerHour(5), core.Every(100, 24*time.Hour), 3, now)
	expect.Equal(t, 97, admitsAt(t, core.FixedWindow, &s, core.Every(100, 24*time.Hour), now))

	// 4 in the previous hour, half of it still in the sliding hour, and 1
	// now: an estimate of 3, carried into the day.
	var st [1]core.State
	spendN(t, core.SlidingWindow, &st[0], core.PerHour(10), 4, now-us(time.Hour))
	spendN(t, core.SlidingWindow, &st[0], core.PerHour(10), 1, now)
	req := core.TakeRequest{Algorithm: core.SlidingWindow, Limits: []core.Limit{core.Every(10, 24*time.Hour)}}
	req.Reexpress(st[:], []core.Limit{core.PerHour(10)}, now)
	expect.Equal(t, int64(3), st[0].N)
	expect.Equal(t, int64(0), st[0].P)
	expect.Equal(t, 7, admitsAt(t, core.SlidingWindow, &st[0], core.Every(10, 24*time.Hour), now))
}

// A count the new rate's bits cannot hold is cut to the new rate; one they
// can hold stays, and denies until it has passed.
func TestReexpressWindowCountCut(t *testing.T) {
	now := hms(3, 0, 0)
	s := edited(t, core.FixedWindow, core.PerHour(100), core.PerHour(5), 90, now)
	expect.Equal(t, int64(5), s.N, "90 does not fit 3 bits: full at 5")
	s = edited(t, core.FixedWindow, core.PerHour(10), core.PerHour(5), 7, now)
	expect.Equal(t, int64(7), s.N, "7 fits 3 bits: kept")
	d, err := applyMicros(core.FixedWindow, &s, core.PerHour(5), 0, now)
	must.NoError(t, err)
	expect.Equal(t, int64(0), d.Remaining, "never a negative remaining")
}

// The one-word forms re-express as Reexpress does on the State, and never
// leave a meter's word as it was when the unit changed.
func TestReexpressWordsMatchStates(t *testing.T) {
	now := hms(8, 20, 11)
	pairs := [][2]core.Limit{
		{core.PerHour(5), core.PerHour(10)}, {core.PerHour(10), core.PerHour(5)},
		{core.PerMinute(30), core.PerHour(100)}, {core.PerSecond(3), core.PerSecond(3).WithBurst(1)},
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow, core.SlidingWindow} {
		for _, p := range pairs {
			if !alg.OneWord() && (p[0].EffectiveBurst() != p[0].Rate || p[1].EffectiveBurst() != p[1].Rate) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s-%s", alg, p[0], p[1]), func(t *testing.T) {
				var st [1]core.State
				spendN(t, alg, &st[0], p[0], 2, now)
				old := core.TakeRequest{Algorithm: alg, Limits: p[:1]}
				req := core.TakeRequest{Algorithm: alg, Limits: p[1:]}
				want := st
				req.Reexpress(want[:], p[:1], now)
				if alg.OneWord() {
					got := req.ReexpressWord(st[0].T, old.WordUnit(), now)
					if old.WordUnit() != req.WordUnit() {
						expect.NotEqual(t, st[0].T, got, "another word")
					}
					expect.InDelta(t, want[0].T, got, 1)
					return
				}
				from, ok := old.WindowPacking()
				must.True(t, ok)
				to, ok := req.WindowPacking()
				must.True(t, ok)
				word, ok := from.Pack(st[0])
				must.True(t, ok)
				got := to.Unpack(req.ReexpressWindowWord(word, from, now))
				if from == to {
					got = st[0]
				}
				expect.Equal(t, want[0], got)
				expect.Equal(t, want[0], req.UnpackUnder(word, from, now))
			})
		}
	}
}

// Identity names the algorithm and the number of limits, not their figures.
func TestIdentity(t *testing.T) {
	id := func(alg core.Algorithm, ls ...core.Limit) uint64 {
		return (&core.TakeRequest{Algorithm: alg, Limits: ls}).Identity()
	}
	expect.Equal(t, id(core.GCRA, core.PerHour(5)), id(core.GCRA, core.PerHour(10).WithBurst(3)))
	expect.NotEqual(t, id(core.GCRA, core.PerHour(5)), id(core.TokenBucket, core.PerHour(5)))
	expect.NotEqual(t, id(core.GCRA, core.PerHour(5)), id(core.GCRA, core.PerHour(5), core.Every(50, 24*time.Hour)))
	expect.True(t, core.SameFigures([]core.Limit{core.PerHour(5).Named("a")}, []core.Limit{core.PerHour(5)}))
	expect.False(t, core.SameFigures([]core.Limit{core.PerHour(5)}, []core.Limit{core.PerHour(5).WithBurst(2)}))
	expect.False(t, core.SameFigures([]core.Limit{core.PerHour(5)}, nil))
}
