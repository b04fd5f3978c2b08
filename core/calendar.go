package core

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// CalendarUnit aligns a limit's windows to the calendar: each window is a
// day, a week or a month in the limit's time zone, starting at local
// midnight, so it lasts 23, 24 or 25 hours across a daylight saving change,
// and a month lasts 28 to 31 days. The zero CalendarUnit is a plain limit
// of Rate per Period.
type CalendarUnit uint8

// The calendar units.
const (
	// CalendarDay windows run from one local midnight to the next.
	CalendarDay CalendarUnit = iota + 1
	// CalendarWeek windows start at local midnight on the anchor weekday
	// (Monday unless anchored, as ISO 8601 weeks do).
	CalendarWeek
	// CalendarMonth windows start at local midnight on the anchor day of
	// each month (the 1st unless anchored; an anchor past the month's last
	// day starts the window on its last day).
	CalendarMonth
)

var calendarUnitNames = [...]string{CalendarDay: "day", CalendarWeek: "week", CalendarMonth: "month"}

// String returns the unit's name as ParseLimit reads it: day, week or
// month; "none" for the zero CalendarUnit.
func (u CalendarUnit) String() string {
	if u == 0 {
		return "none"
	}
	if u >= CalendarDay && u <= CalendarMonth {
		return calendarUnitNames[u]
	}
	return fmt.Sprintf("CalendarUnit(%d)", uint8(u))
}

// nominal is the unit's Period: the length it is shown and compared by.
func (u CalendarUnit) nominal() time.Duration {
	switch u {
	case CalendarDay:
		return 24 * time.Hour
	case CalendarWeek:
		return 7 * 24 * time.Hour
	}
	return 30 * 24 * time.Hour
}

// Monthly returns a limit of rate events per calendar month in UTC,
// starting on the 1st; see [Limit.In] and [Limit.AnchoredOn].
func Monthly(rate int64) Limit { return calendarLimit(rate, CalendarMonth) }

// Weekly returns a limit of rate events per calendar week in UTC, starting
// on Monday; see [Limit.In] and [Limit.AnchoredOn].
func Weekly(rate int64) Limit { return calendarLimit(rate, CalendarWeek) }

// Daily returns a limit of rate events per calendar day in UTC; see
// [Limit.In]. In UTC it admits as [Every](rate, 24*time.Hour) does under the
// window algorithms; in another zone its days start at local midnight.
func Daily(rate int64) Limit { return calendarLimit(rate, CalendarDay) }

func calendarLimit(rate int64, u CalendarUnit) Limit {
	return Limit{Rate: rate, Period: u.nominal(), Burst: rate, Calendar: u}
}

// In returns a copy of the calendar limit l whose windows follow the IANA
// time zone zone ("Europe/Berlin"; "" or "UTC" for UTC, kept as ""). An unknown zone
// fails in [NewLimiter] (and in [Limit.Validate]).
func (l Limit) In(zone string) Limit {
	if zone == "UTC" {
		zone = ""
	}
	l.Zone = zone
	return l
}

// AnchoredOn returns a copy of the calendar limit l whose windows start on
// day: the day of the month (1 to 31) for a monthly limit, a billing day
// (on the 31st, a 30-day month's window starts on the 30th, February's on
// its last day); the ISO weekday (1 Monday to 7 Sunday) for a weekly one.
func (l Limit) AnchoredOn(day int) Limit { l.AnchorDay = day; return l }

// IsCalendar reports whether l's windows follow the calendar.
func (l Limit) IsCalendar() bool { return l.Calendar != 0 }

// validateCalendar checks the calendar fields of l (the zero ones of a
// plain limit included).
func (l Limit) validateCalendar() error {
	switch {
	case l.Calendar == 0 && (l.Zone != "" || l.AnchorDay != 0):
		return fmt.Errorf("%w: a time zone or anchor day needs a calendar unit (day, week or month)", ErrInvalidLimit)
	case l.Calendar == 0:
		return nil
	case l.Calendar > CalendarMonth:
		return fmt.Errorf("%w: calendar unit %d is not day, week or month", ErrInvalidLimit, uint8(l.Calendar))
	case l.Period != 0 && l.Period != l.Calendar.nominal():
		return fmt.Errorf("%w: a calendar %s's period is %s (or 0), got %s", ErrInvalidLimit, l.Calendar, l.Calendar.nominal(), l.Period)
	case l.Burst != 0 && l.Burst != l.Rate:
		return fmt.Errorf("%w: a calendar limit takes no burst (the fixed and sliding windows count Rate per window), got burst %d for rate %d", ErrInvalidLimit, l.Burst, l.Rate)
	}
	if err := checkAnchor(l.Calendar, l.AnchorDay); err != nil {
		return err
	}
	_, err := loadZone(l.Zone)
	return err
}

func checkAnchor(u CalendarUnit, day int) error {
	switch {
	case day == 0:
		return nil
	case u == CalendarDay:
		return fmt.Errorf("%w: a calendar day takes no anchor day (got %d)", ErrInvalidLimit, day)
	case u == CalendarWeek && (day < 1 || day > 7):
		return fmt.Errorf("%w: a week's anchor day is an ISO weekday from 1 (Monday) to 7 (Sunday), got %d", ErrInvalidLimit, day)
	case u == CalendarMonth && (day < 1 || day > 31):
		return fmt.Errorf("%w: a month's anchor day is from 1 to 31, got %d", ErrInvalidLimit, day)
	}
	return nil
}

// zones caches every time zone loaded (only valid IANA names are kept, a
// few hundred at most), since time.LoadLocation reads the tz database on
// each call.
var zones sync.Map // string -> *time.Location

// loadZone returns the named IANA time zone, "" being UTC.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if v, ok := zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	if len(name) > 64 || name == "Local" {
		return nil, fmt.Errorf("%w: unknown time zone %q (want an IANA name such as Europe/Berlin)", ErrInvalidLimit, truncate(name))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		// A program on an image without the system's tz database (scratch,
		// distroless static) finds no zone: it can embed one with
		// import _ "time/tzdata" (about 450 KB), which core does not force
		// on every program.
		return nil, fmt.Errorf("%w: unknown time zone %q (want an IANA name such as Europe/Berlin; without a system tz database, import _ \"time/tzdata\")", ErrInvalidLimit, name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// calendar computes a calendar limit's windows, caching the one the clock
// is in: a request inside it reads two integers and compares them, and a
// request past its end computes the next one and swaps it in (one small
// allocation per window boundary, none per request). One calendar exists
// per unit, zone and anchor (calendars caches them), shared by every
// limiter and store in the process. It is safe for concurrent use.
type calendar struct {
	unit   CalendarUnit
	anchor int
	loc    *time.Location
	cur    atomic.Pointer[calWin]
}

// win is a window [start, end), with the start of the one before it (prev)
// and the end of the one after it (next), in µs since the epoch.
type win struct{ prev, start, end, next int64 }

// calWin is a calendar window with the start of the window before its
// previous one and the end of the one after its next (CalendarBounds).
type calWin struct {
	win
	before, after int64
}

type calendarKey struct {
	unit   CalendarUnit
	zone   string
	anchor int
}

var calendars sync.Map // calendarKey -> *calendar

// calendarOf returns the calendar of a valid calendar limit.
func calendarOf(l *Limit) (*calendar, error) {
	k := calendarKey{l.Calendar, l.Zone, l.AnchorDay}
	if v, ok := calendars.Load(k); ok {
		return v.(*calendar), nil
	}
	if err := l.validateCalendar(); err != nil {
		return nil, err
	}
	loc, _ := loadZone(l.Zone)
	anchor := max(l.AnchorDay, 1)
	v, _ := calendars.LoadOrStore(k, &calendar{unit: l.Calendar, anchor: anchor, loc: loc})
	return v.(*calendar), nil
}

// window returns the window holding now (µs since the epoch). It is kept out
// of line so that params.window, which every window decision calls, stays
// small enough to inline on the plain limits' path.
//
//go:noinline
func (c *calendar) window(now int64) win { return c.bounds(now).win }

// bounds returns the window holding now with its wider bounds.
func (c *calendar) bounds(now int64) calWin {
	if w := c.cur.Load(); w != nil && now >= w.start && now < w.end {
		return *w
	}
	w := c.compute(now)
	if cur := c.cur.Load(); cur == nil || w.start > cur.start {
		c.cur.Store(&w)
	}
	return w
}

// compute finds the window holding now without the cache.
func (c *calendar) compute(now int64) calWin {
	t := time.UnixMicro(now).In(c.loc)
	start := c.startOn(t)
	for start.After(t) {
		start = c.step(start, -1)
	}
	for end := c.step(start, 1); !end.After(t); end = c.step(start, 1) {
		start = end
	}
	prev := c.step(start, -1)
	before := c.step(prev, -1)
	end := c.step(start, 1)
	next := c.step(end, 1)
	after := c.step(next, 1)
	return calWin{win: win{prev: prev.UnixMicro(), start: start.UnixMicro(), end: end.UnixMicro(), next: next.UnixMicro()},
		before: before.UnixMicro(), after: after.UnixMicro()}
}

// startOn is the start of the window that begins in t's month (month), week
// (week) or on t's day (day): at or before t, or the one just after it.
func (c *calendar) startOn(t time.Time) time.Time {
	y, m, d := t.Date()
	switch c.unit {
	case CalendarDay:
		return midnight(y, m, d, c.loc)
	case CalendarWeek:
		back := (int(t.Weekday())+6)%7 + 1 - c.anchor // ISO weekday minus the anchor
		if back < 0 {
			back += 7
		}
		return midnight(y, m, d-back, c.loc)
	}
	return c.monthStart(y, m)
}

// step moves a window start by n (±1) windows.
func (c *calendar) step(start time.Time, n int) time.Time {
	y, m, d := start.Date()
	switch c.unit {
	case CalendarDay:
		return midnight(y, m, d+n, c.loc)
	case CalendarWeek:
		return midnight(y, m, d+7*n, c.loc)
	}
	return c.monthStart(y, m+time.Month(n))
}

// monthStart is the window start in month m of year y (m may be out of
// range, as time.Date takes it): the anchor day, or the month's last day
// when it has fewer days.
func (c *calendar) monthStart(y int, m time.Month) time.Time {
	first := time.Date(y, m, 1, 12, 0, 0, 0, time.UTC) // normalises y and m
	y, m = first.Year(), first.Month()
	last := time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC).Day()
	return midnight(y, m, min(c.anchor, last), c.loc)
}

// midnight is the first instant of the local day y-m-d (d may be out of
// range, as time.Date takes it) in loc. Where a daylight saving change skips
// midnight (clocks jump from 00:00 to 01:00), the day starts at the change.
func midnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	y, m, d = time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Date()
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	switch {
	case t.Day() != d: // the instant before the gap, on the day before
		_, end := t.ZoneBounds()
		if !end.IsZero() {
			return end.In(loc)
		}
	case t.Hour() != 0 || t.Minute() != 0: // after the gap
		if start, _ := t.ZoneBounds(); !start.IsZero() && start.In(loc).Day() == d {
			return start.In(loc)
		}
	}
	return t
}
