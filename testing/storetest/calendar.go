package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RunCalendar drives the fixed and sliding windows under calendar limits
// (core.Monthly, core.Weekly, core.Daily in a time zone) across the
// boundaries that make calendars hard: a month's end in New York, the
// 23-hour day when New York's clocks spring forward, the 25-hour day when
// Berlin's fall back, a leap February's anchor day, an anchor on the 31st
// in a 30-day month, and a week. Each sequence of spends, peeks and refunds
// must give, decision by decision, what the reference decides, alone, beside
// a plain limit and with a penalty box; 64 goroutines on 4 limiters sharing the store must
// admit exactly what the reference admits just before, at and after a
// boundary; a calendar limit under any other algorithm is an error.
func RunCalendar(t *testing.T, newStore NewStore) {
	t.Run("Scripted", func(t *testing.T) { calendarScripted(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { calendarConcurrent(t, newStore) })
	t.Run("BadInput", func(t *testing.T) { calendarBadInput(t, newStore) })
}

// calendarCase is a calendar limit and one of its window boundaries, which
// a script straddles by span on both sides.
type calendarCase struct {
	name     string
	limit    core.Limit
	boundary time.Time
	span     time.Duration
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	must.NoError(t, err)
	return loc
}

func calendarCases(t *testing.T) []calendarCase {
	ny, berlin, tokyo := zone(t, "America/New_York"), zone(t, "Europe/Berlin"), zone(t, "Asia/Tokyo")
	const day = 24 * time.Hour
	return []calendarCase{
		{"month end in New York", core.Monthly(12).In("America/New_York"), time.Date(2026, 3, 1, 0, 0, 0, 0, ny), 3 * day},
		{"New York springs forward", core.Daily(12).In("America/New_York"), time.Date(2026, 3, 9, 0, 0, 0, 0, ny), 30 * time.Hour},
		{"Berlin falls back", core.Daily(12).In("Europe/Berlin"), time.Date(2026, 10, 26, 0, 0, 0, 0, berlin), 30 * time.Hour},
		{"leap February anchored on the 29th", core.Monthly(12).AnchoredOn(29), time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), 3 * day},
		{"anchor 31 in a 30-day month", core.Monthly(12).In("Asia/Tokyo").AnchoredOn(31), time.Date(2026, 4, 30, 0, 0, 0, 0, tokyo), 3 * day},
		{"week from Sunday in Berlin", core.Weekly(12).In("Europe/Berlin").AnchoredOn(7), time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), 4 * day},
	}
}

// calendarScript makes a reproducible sequence of requests from span before
// the boundary to span after it: bursts at one instant, steps of up to a
// hundredth of the span, the boundary's last and first microseconds, a
// clock that steps back by up to a second, and refunds of costs admitted at
// an earlier step's instant.
func calendarScript(seed uint64, c calendarCase, n int) []step {
	rng := rand.New(rand.NewPCG(seed, 0xca1e))
	now := c.boundary.Add(-c.span)
	steps := make([]step, 0, n)
	for i := range n {
		switch r := rng.IntN(100); {
		case i == n/2:
			now = c.boundary.Add(-time.Microsecond)
		case i == n/2+1:
			now = c.boundary
		case r < 40: // same instant: a burst
		case r < 95:
			now = now.Add(time.Duration(rng.Int64N(int64(c.span/50)/1000+1)) * time.Microsecond)
		default:
			now = now.Add(-time.Duration(rng.Int64N(1_000_000)) * time.Microsecond)
		}
		cost := int64(1)
		switch r := rng.IntN(100); {
		case r < 8:
			cost = 0
		case r < 20:
			cost = 2
		case r < 22:
			cost = c.limit.Rate + 1
		case r < 32:
			cost = -1 - rng.Int64N(2)
		}
		admitted := refundAdmission(rng, steps, cost, 30) // before the key: the scripts' order of draws
		steps = append(steps, step{at: now, key: scriptKeys[rng.IntN(3)], cost: cost, admitted: admitted})
	}
	return steps
}

func calendarScripted(t *testing.T, newStore NewStore) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for ci, c := range calendarCases(t) {
			sets := []struct {
				limits []core.Limit
				block  time.Duration // a penalty box (core.WithBlockFor)
			}{
				{[]core.Limit{c.limit}, 0},
				{[]core.Limit{core.PerHour(5).Named("hour"), c.limit}, 0},
				{[]core.Limit{c.limit}, c.span / 20},
			}
			for si, set := range sets {
				limits := set.limits
				t.Run(fmt.Sprintf("%s/%s/%d", alg, c.name, si), func(t *testing.T) {
					st, ref := newStore(t), NewReference()
					ns := fmt.Sprintf("calendar-%s-%d-%d", alg, ci, si)
					for n, s := range calendarScript(uint64(ci*16+si)+uint64(alg)<<8, c, 240) {
						agree(t, st, ref, n, core.TakeRequest{Key: s.key, Namespace: ns, Algorithm: alg, Limits: limits, Cost: s.cost, Now: s.at, Admitted: s.admitted, BlockFor: set.block})
					}
				})
			}
		}
	}
}

// calendarConcurrent has 64 goroutines on 4 limiters sharing one store
// spend on one key at three instants: a month's last microsecond, the next
// month's first, and the middle of the next month; each time exactly what
// the reference admits (the fixed window: 100, 100, 0; the sliding window:
// 100, 0, then what the previous month's weight leaves) is admitted.
func calendarConcurrent(t *testing.T, newStore NewStore) {
	ny := zone(t, "America/New_York")
	boundary := time.Date(2026, 4, 1, 0, 0, 0, 0, ny)
	instants := []time.Time{boundary.Add(-time.Microsecond), boundary, boundary.Add(15 * 24 * time.Hour)}
	l := core.Monthly(100).In("America/New_York")
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t)
			want := calendarReference(t, alg, l, instants, 64*5)
			clocks := make([]*core.ManualClock, 4)
			lims := make([]*core.Limiter, 4)
			for i := range lims {
				clocks[i] = core.NewManualClock(instants[0])
				var err error
				lims[i], err = core.NewLimiter(st, alg, l, core.WithClock(clocks[i]), core.WithNamespace("calendar-concurrent"), core.WithoutBreaker())
				must.NoError(t, err)
			}
			for k, at := range instants {
				for _, c := range clocks {
					c.Set(at)
				}
				var admitted atomic.Int64
				var wg sync.WaitGroup
				for g := range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 5 {
							d, err := lims[g%4].Allow(context.Background(), "hot")
							if !expect.NoError(t, err) {
								return
							}
							if d.Allowed {
								admitted.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				must.Equal(t, want[k], admitted.Load(), "admitted at %s", at.Format(time.RFC3339Nano))
			}
		})
	}
}

// calendarReference counts what the reference admits of n requests at
// each instant, in turn.
func calendarReference(t *testing.T, alg core.Algorithm, l core.Limit, instants []time.Time, n int) []int64 {
	clk := core.NewManualClock(instants[0])
	lim, err := core.NewLimiter(NewReference(), alg, l, core.WithClock(clk))
	must.NoError(t, err)
	out := make([]int64, len(instants))
	for k, at := range instants {
		clk.Set(at)
		for range n {
			d, err := lim.Allow(context.Background(), "hot")
			must.NoError(t, err)
			if d.Allowed {
				out[k]++
			}
		}
	}
	return out
}

// calendarBadInput: a calendar limit under an algorithm that takes none, in
// an unknown zone, or with an anchor day that cannot be, is an error
// wrapping core.ErrInvalidLimit, and spends nothing.
func calendarBadInput(t *testing.T, newStore NewStore) {
	st := newStore(t)
	ctx := context.Background()
	bad := []struct {
		alg   core.Algorithm
		limit core.Limit
	}{
		{core.TokenBucket, core.Monthly(10)},
		{core.GCRA, core.Daily(10).In("Europe/Berlin")},
		{core.LeakyBucket, core.Weekly(10)},
		{core.SlidingLog, core.Monthly(10)},
		{core.FixedWindow, core.Monthly(10).In("Nowhere/Atlantis")},
		{core.FixedWindow, core.Monthly(10).AnchoredOn(32)},
		{core.SlidingWindow, core.Weekly(10).AnchoredOn(0 - 1)},
		{core.FixedWindow, core.Monthly(0)},
	}
	for _, b := range bad {
		req := core.TakeRequest{Key: "k", Namespace: "calendar-bad", Algorithm: b.alg, Limits: []core.Limit{b.limit}, Cost: 1, Now: Start}
		var err error
		must.NotPanics(t, func() { _, err = st.Take(ctx, req) })
		must.ErrorIs(t, err, core.ErrInvalidLimit, "%s %+v", b.alg, b.limit)
	}
	// Nothing was spent: a valid fixed-window monthly quota on the same key is fresh.
	req := core.TakeRequest{Key: "k", Namespace: "calendar-bad", Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(10)}, Cost: 0, Now: Start}
	d, err := st.Take(ctx, req)
	must.NoError(t, err)
	must.Equal(t, int64(10), d.Remaining)
}
