package core

import (
	"fmt"
	"time"
)

// What the calendar means for states and stores: when a state is fresh
// again, how a state written under other windows is carried, and the
// window bounds a store that decides elsewhere (the Lua scripts, which have
// no time zone database) is given.

// calendarCarry is how far back a state written under another calendar is
// still carried by an edit: two of the longest months.
const calendarCarry = 64 * 24 * int64(time.Hour/time.Microsecond)

// calendarFreshAt is freshAt of a calendar limit's fixed (sliding false)
// or sliding window state: the end of its window, or of the one after.
func calendarFreshAt(s *State, l *Limit, sliding bool) int64 {
	c, err := calendarOf(l)
	if err != nil {
		return s.T + 2*l.Calendar.nominal().Microseconds()
	}
	w := c.window(s.T)
	if sliding {
		return w.next
	}
	return w.end
}

// reexpressCalendar carries a window state written under the calendar of
// old into the windows of p at now. A state whose window starts where one
// of p's does keeps its counts (the same windows: only the rate changed, or
// the zone has the same midnights). Any other state whose window started in
// p's previous window or later, and within calendarCarry, carries both its
// counts into p's window holding now, so an edit never mints quota; older
// ones are left as they are, and decide as fresh.
func reexpressCalendar(s *State, old, p *params, now int64) {
	if old.cal == p.cal || p.isStart(s.T) {
		return
	}
	w := p.window(now)
	if s.T < w.prev || s.T <= now-calendarCarry {
		return
	}
	used := s.N + s.P
	*s = State{}
	if used > 0 {
		s.T, s.N = w.start, used
	}
}

// isStart reports whether t is the start of one of p's windows.
func (p *params) isStart(t int64) bool {
	if p.cal != nil {
		return p.cal.window(t).start == t
	}
	return t%p.period == 0
}

// calendarHash hashes a calendar limit's unit, zone and anchor day (FNV-1a).
func calendarHash(l *Limit) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(l.Zone); i++ {
		h = (h ^ uint64(l.Zone[i])) * 1099511628211
	}
	return h ^ uint64(l.Calendar)<<56 ^ uint64(l.AnchorDay)<<48
}

// CalendarBounds are the window bounds a store that decides without a time
// zone database is given for one limit: the starts of five consecutive
// windows, the one before the previous, the previous, the current, the
// next and the one after, and the end of that last one, in µs since the
// epoch. The window holding the store's own now is the one starting at
// b[i] with b[i] <= now < b[i+1] for i of 1, 2 or 3; its previous window
// starts at b[i-1], and the one after it ends at b[i+2].
type CalendarBounds [6]int64

// CalendarBounds returns the bounds of r's limit i around now (µs since
// the epoch), and false when that limit is not a valid calendar limit.
// Every window it names comes from the limit's cached calendar: only a
// request past the cached window's end computes (and caches) new ones.
func (r *TakeRequest) CalendarBounds(i int, now int64) (CalendarBounds, bool) {
	if i < 0 || i >= len(r.Limits) || r.Limits[i].Calendar == 0 {
		return CalendarBounds{}, false
	}
	var c *calendar
	if pl := r.prepared(); pl != nil {
		c = pl.params[i].cal
	} else if cal, err := calendarOf(&r.Limits[i]); err == nil {
		c = cal
	}
	if c == nil {
		return CalendarBounds{}, false
	}
	w := c.bounds(now)
	return CalendarBounds{w.before, w.prev, w.start, w.end, w.next, w.after}, true
}

// WindowAt returns the window of l holding t: for a calendar limit, the day,
// week or month in its zone (the instants in its zone); for any other, the
// aligned window of Period that the fixed and sliding windows count in (in
// UTC). The end is when a fixed window's count starts afresh. It returns an
// error wrapping ErrInvalidLimit for an invalid limit.
func (l Limit) WindowAt(t time.Time) (start, end time.Time, err error) {
	if err := l.Validate(); err != nil {
		return time.Time{}, time.Time{}, err
	}
	now := Micros(t)
	if now < 0 || now > MaxTime {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: %s is outside the instants the algorithms take", ErrClock, t)
	}
	p, err := computeParams(l)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	w := p.window(now)
	loc := time.UTC
	if p.cal != nil {
		loc = p.cal.loc
	}
	return time.UnixMicro(w.start).In(loc), time.UnixMicro(w.end).In(loc), nil
}
