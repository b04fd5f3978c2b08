package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// at parses a local wall time in zone, as "2024-02-29 23:59:59".
func at(t *testing.T, zone, wall string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	must.NoError(t, err)
	v, err := time.ParseInLocation(time.DateTime, wall, loc)
	must.NoError(t, err)
	return v
}

func TestCalendarWindows(t *testing.T) {
	ny, berlin := "America/New_York", "Europe/Berlin"
	tests := []struct {
		name       string
		limit      core.Limit
		zone, now  string
		start, end string
		length     time.Duration
	}{
		{"month UTC", core.Monthly(10), "UTC", "2024-02-15 10:00:00", "2024-02-01 00:00:00", "2024-03-01 00:00:00", 29 * 24 * time.Hour},
		{"month's first instant", core.Monthly(10), "UTC", "2024-03-01 00:00:00", "2024-03-01 00:00:00", "2024-04-01 00:00:00", 31 * 24 * time.Hour},
		{"month's last instant in New York", core.Monthly(10).In(ny), ny, "2024-02-29 23:59:59", "2024-02-01 00:00:00", "2024-03-01 00:00:00", 29 * 24 * time.Hour},
		{"month holding a DST change", core.Monthly(10).In(ny), ny, "2024-03-20 12:00:00", "2024-03-01 00:00:00", "2024-04-01 00:00:00", 31*24*time.Hour - time.Hour},
		{"anchor 31 in a 30-day month", core.Monthly(10).AnchoredOn(31), "UTC", "2024-04-15 00:00:00", "2024-03-31 00:00:00", "2024-04-30 00:00:00", 30 * 24 * time.Hour},
		{"anchor 31 from a 30-day month's last day", core.Monthly(10).AnchoredOn(31), "UTC", "2024-04-30 00:00:00", "2024-04-30 00:00:00", "2024-05-31 00:00:00", 31 * 24 * time.Hour},
		{"anchor 31 in a leap February", core.Monthly(10).AnchoredOn(31), "UTC", "2024-03-01 00:00:00", "2024-02-29 00:00:00", "2024-03-31 00:00:00", 31 * 24 * time.Hour},
		{"anchor 31 in a common February", core.Monthly(10).AnchoredOn(31), "UTC", "2023-03-01 00:00:00", "2023-02-28 00:00:00", "2023-03-31 00:00:00", 31 * 24 * time.Hour},
		{"anchor 30 before February", core.Monthly(10).AnchoredOn(30), "UTC", "2024-02-28 00:00:00", "2024-01-30 00:00:00", "2024-02-29 00:00:00", 30 * 24 * time.Hour},
		{"anchor 15 across a year", core.Monthly(10).AnchoredOn(15).In(berlin), berlin, "2025-01-03 08:00:00", "2024-12-15 00:00:00", "2025-01-15 00:00:00", 31 * 24 * time.Hour},
		{"23-hour day (spring forward)", core.Daily(10).In(ny), ny, "2024-03-10 12:00:00", "2024-03-10 00:00:00", "2024-03-11 00:00:00", 23 * time.Hour},
		{"25-hour day (fall back)", core.Daily(10).In(berlin), berlin, "2024-10-27 02:30:00", "2024-10-27 00:00:00", "2024-10-28 00:00:00", 25 * time.Hour},
		{"week from Monday", core.Weekly(10), "UTC", "2024-01-03 12:00:00", "2024-01-01 00:00:00", "2024-01-08 00:00:00", 7 * 24 * time.Hour},
		{"week from Sunday", core.Weekly(10).AnchoredOn(7), "UTC", "2024-01-03 12:00:00", "2023-12-31 00:00:00", "2024-01-07 00:00:00", 7 * 24 * time.Hour},
		{"week across a DST change", core.Weekly(10).In(berlin), berlin, "2024-03-31 12:00:00", "2024-03-25 00:00:00", "2024-04-01 00:00:00", 7*24*time.Hour - time.Hour},
		{"a plain day is the UTC day", core.Every(10, 24*time.Hour), "UTC", "2024-03-10 12:00:00", "2024-03-10 00:00:00", "2024-03-11 00:00:00", 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end, err := tt.limit.WindowAt(at(t, tt.zone, tt.now))
			must.NoError(t, err)
			must.Equal(t, at(t, tt.zone, tt.start).UnixMicro(), start.UnixMicro(), "start %s", start)
			must.Equal(t, at(t, tt.zone, tt.end).UnixMicro(), end.UnixMicro(), "end %s", end)
			must.Equal(t, tt.length, end.Sub(start))
		})
	}
}

// Where daylight saving time starts at midnight (Havana), the day starts
// when the clocks jump, at 01:00.
func TestCalendarDayWithoutMidnight(t *testing.T) {
	l := core.Daily(5).In("America/Havana")
	start, end, err := l.WindowAt(at(t, "America/Havana", "2024-03-10 12:00:00"))
	must.NoError(t, err)
	must.Equal(t, 1, start.Hour(), "the day starts at %s", start)
	must.Equal(t, 10, start.Day())
	must.Equal(t, 23*time.Hour, end.Sub(start))
	// The day before ends where this one starts.
	_, prevEnd, err := l.WindowAt(start.Add(-time.Second))
	must.NoError(t, err)
	must.Equal(t, start.UnixMicro(), prevEnd.UnixMicro())
}

// Consecutive windows tile time: every window ends where the next starts,
// over years of every unit, zone and anchor.
func TestCalendarWindowsTile(t *testing.T) {
	limits := []core.Limit{
		core.Daily(1).In("America/New_York"), core.Daily(1).In("Australia/Lord_Howe"),
		core.Weekly(1).In("Europe/Berlin").AnchoredOn(3), core.Monthly(1).In("Pacific/Apia").AnchoredOn(31),
		core.Monthly(1).In("Asia/Kolkata").AnchoredOn(29),
	}
	for _, l := range limits {
		t.Run(l.String(), func(t *testing.T) {
			tm := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
			_, end, err := l.WindowAt(tm)
			must.NoError(t, err)
			for range 400 {
				start, next, err := l.WindowAt(end)
				must.NoError(t, err)
				must.Equal(t, end.UnixMicro(), start.UnixMicro(), "a window starts where the last ended")
				must.Greater(t, next.Sub(start), 20*time.Hour)
				must.Less(t, next.Sub(start), 32*24*time.Hour)
				_, e2, err := l.WindowAt(next.Add(-time.Microsecond))
				must.NoError(t, err)
				must.Equal(t, next.UnixMicro(), e2.UnixMicro(), "the window's last instant is in it")
				end = next
			}
		})
	}
}

// The fixed window counts per calendar month: full until the last
// microsecond of the month, then fresh, with reset and retry exact to the
// boundary.
func TestCalendarFixedWindowDecisions(t *testing.T) {
	l := core.Monthly(3).In("America/New_York")
	var s core.State
	now := at(t, "America/New_York", "2024-02-29 20:00:00")
	boundary := at(t, "America/New_York", "2024-03-01 00:00:00")
	for i := range 3 {
		d, err := applyAt(core.FixedWindow, &s, l, 1, now)
		must.NoError(t, err)
		must.True(t, d.Allowed, "request %d", i)
		must.Equal(t, boundary.Sub(now), d.ResetAfter)
	}
	d, err := applyAt(core.FixedWindow, &s, l, 1, boundary.Add(-time.Microsecond))
	must.NoError(t, err)
	must.False(t, d.Allowed)
	must.Equal(t, time.Microsecond, d.RetryAfter, "retry exactly at the boundary")
	d, err = applyAt(core.FixedWindow, &s, l, 1, boundary)
	must.NoError(t, err)
	must.True(t, d.Allowed, "a new month")
	must.Equal(t, int64(2), d.Remaining)
	must.Equal(t, at(t, "America/New_York", "2024-04-01 00:00:00").Sub(boundary), d.ResetAfter)
	must.Equal(t, at(t, "America/New_York", "2024-04-01 00:00:00").UnixMicro(), freshAt(core.FixedWindow, &s, l))
}

// The sliding window weighs the previous calendar window's count over the
// current window's length; every decision keeps its promises (retry-after
// and remaining exact).
func TestCalendarSlidingWindowDecisions(t *testing.T) {
	l := core.Daily(10).In("Europe/Berlin")
	var s core.State
	day := at(t, "Europe/Berlin", "2024-10-26 08:00:00")
	for range 8 {
		before := clone(s)
		d, err := applyAt(core.SlidingWindow, &s, l, 1, day)
		must.NoError(t, err)
		checkDecision(t, core.SlidingWindow, before, s, l, 1, core.Micros(day), d)
	}
	// 2024-10-27 lasts 25 hours: at 12:30 local, 12.5 of them have passed.
	now := at(t, "Europe/Berlin", "2024-10-27 12:30:00")
	before := clone(s)
	d, err := applyAt(core.SlidingWindow, &s, l, 6, now)
	must.NoError(t, err)
	must.True(t, d.Allowed, "8 * 12.5/25 + 6 = 10")
	checkDecision(t, core.SlidingWindow, before, s, l, 6, core.Micros(now), d)
	before = clone(s)
	d, err = applyAt(core.SlidingWindow, &s, l, 1, now)
	must.NoError(t, err)
	must.False(t, d.Allowed)
	checkDecision(t, core.SlidingWindow, before, s, l, 1, core.Micros(now), d)
	must.Equal(t, at(t, "Europe/Berlin", "2024-10-29 00:00:00").Sub(now), d.ResetAfter, "the count ends with the next day")
	must.Equal(t, at(t, "Europe/Berlin", "2024-10-29 00:00:00").UnixMicro(), freshAt(core.SlidingWindow, &s, l))
}

func TestCalendarRefund(t *testing.T) {
	l := core.Monthly(2)
	var s core.State
	jan := at(t, "UTC", "2024-01-31 23:00:00")
	_, err := applyAt(core.FixedWindow, &s, l, 2, jan)
	must.NoError(t, err)
	lim := []core.Limit{l}
	req := core.TakeRequest{Algorithm: core.FixedWindow, Limits: lim, Cost: -1, Now: jan.Add(time.Minute), Admitted: jan}
	st := []core.State{s}
	var d core.Decision
	must.NoError(t, req.Decide(&d, st, core.Micros(req.Now)))
	must.Equal(t, int64(1), d.Remaining, "a refund in the admission's month gives back")
	req.Now = at(t, "UTC", "2024-02-01 00:00:00")
	st = []core.State{s}
	must.NoError(t, req.Decide(&d, st, core.Micros(req.Now)))
	must.Equal(t, s, st[0], "a refund after the month ended gives nothing back")
}

func TestCalendarValidation(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.SlidingLog, core.GCRA} {
		err := alg.ValidateLimit(core.Monthly(100))
		must.ErrorIs(t, err, core.ErrInvalidLimit)
		must.ErrorContains(t, err, alg.String()+" cannot follow calendar months")
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		must.NoError(t, alg.ValidateLimit(core.Monthly(100).In("Asia/Tokyo").AnchoredOn(31)))
	}
	bad := []struct {
		limit core.Limit
		msg   string
	}{
		{core.Monthly(100).In("Nowhere/Atlantis"), "unknown time zone"},
		{core.Monthly(100).In("Local"), "unknown time zone"},
		{core.Monthly(100).In("../../etc/passwd"), "unknown time zone"},
		{core.Monthly(0), "rate must be positive"},
		{core.Monthly(100).AnchoredOn(32), "from 1 to 31"},
		{core.Monthly(100).AnchoredOn(-1), "from 1 to 31"},
		{core.Weekly(100).AnchoredOn(8), "ISO weekday"},
		{core.Daily(100).AnchoredOn(2), "takes no anchor day"},
		{core.PerHour(100).In("Europe/Berlin"), "needs a calendar unit"},
		{core.Limit{Rate: 1, Calendar: 9}, "not day, week or month"},
		{core.Limit{Rate: 1, Calendar: core.CalendarMonth, Period: time.Hour}, "period is 720h0m0s (or 0)"},
	}
	for _, b := range bad {
		err := b.limit.Validate()
		must.ErrorIs(t, err, core.ErrInvalidLimit, b.limit)
		must.ErrorContains(t, err, b.msg)
		_, err = core.NewLimiter(&oneState{}, core.FixedWindow, b.limit)
		must.ErrorIs(t, err, core.ErrInvalidLimit)
	}
	// A Go value without a Period gets its unit's, as a missing Burst gets Rate.
	lim, err := core.NewLimiter(&oneState{}, core.FixedWindow, core.Limit{Rate: 5, Calendar: core.CalendarWeek})
	must.NoError(t, err)
	must.Equal(t, core.Weekly(5).Named("default"), lim.Limits()[0])
}

func TestCalendarParseLimit(t *testing.T) {
	tests := []struct {
		text string
		want core.Limit
	}{
		{"10000/month", core.Monthly(10000)},
		{"500/week", core.Weekly(500)},
		{"500/weeks anchor 7", core.Weekly(500).AnchoredOn(7)},
		{"1000/day in Europe/Berlin", core.Daily(1000).In("Europe/Berlin")},
		{"1000/d in UTC", core.Daily(1000)},
		{"10000/month in America/New_York anchor 15", core.Monthly(10000).In("America/New_York").AnchoredOn(15)},
		{" 10000 / month  anchor 31  in  Asia/Tokyo ", core.Monthly(10000).In("Asia/Tokyo").AnchoredOn(31)},
		{"1000/day", core.Every(1000, 24*time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := core.ParseLimit(tt.text)
			must.NoError(t, err)
			must.Equal(t, tt.want, got)
			back, err := core.ParseLimit(got.String())
			must.NoError(t, err)
			must.Equal(t, got, back, "String %q reads back", got.String())
		})
	}
	must.Equal(t, "1000/day in UTC", core.Daily(1000).String())
	must.Equal(t, "10000/month in America/New_York anchor 15", core.Monthly(10000).In("America/New_York").AnchoredOn(15).String())
}

// A calendar limit's decisions allocate nothing once its window is cached.
func TestCalendarDecisionAllocates(t *testing.T) {
	clk := core.NewManualClock(at(t, "UTC", "2024-05-10 00:00:00"))
	lim, err := core.NewLimiter(&oneState{}, core.FixedWindow, core.Monthly(1<<40).In("Europe/Berlin"), core.WithClock(clk))
	must.NoError(t, err)
	ctx := context.Background()
	_, err = lim.Allow(ctx, "k")
	must.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		clk.Advance(time.Second)
		if d, err := lim.Allow(ctx, "k"); err != nil || !d.Allowed {
			t.Fatalf("%v %+v", err, d)
		}
	})
	must.Equal(t, 0.0, allocs)
}

// oneState is a store of one key's states that decides with Decide, as a
// store does with the figures its Limiter computed once.
type oneState struct{ states []core.State }

func (s *oneState) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	if len(s.states) != len(req.Limits) {
		s.states = make([]core.State, len(req.Limits))
	}
	var d core.Decision
	err := req.Decide(&d, s.states, core.Micros(req.Now))
	return d, err
}
