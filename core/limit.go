package core

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bounds on a Limit. They keep every value an algorithm computes below 2^53
// microseconds, where both Go's int64 and Lua's doubles are exact.
const (
	// MaxPeriod is the longest period a Limit may have (about 8.9 years).
	MaxPeriod = time.Duration(1<<48) * time.Microsecond
	// MaxTime is the latest instant the algorithms accept, in microseconds since
	// the Unix epoch (2^52 µs, in the year 2112).
	MaxTime = int64(1) << 52
)

// Limit is Rate events per Period, with a Burst: the most that may be spent at
// once (the bucket's capacity, or the leaky bucket's queue; the window
// algorithms take no burst other than Rate). Build one with [PerSecond],
// [PerMinute], [PerHour], [Every] or [ParseLimit]. A Limit is a plain value:
// limits with the same fields are ==. An invalid limit fails in [NewLimiter],
// never at request time.
type Limit struct {
	// Rate is the number of events allowed per Period.
	Rate int64
	// Period is the length of the window over which Rate applies.
	Period time.Duration
	// Burst is the most that may be spent at once; 0 means Rate.
	Burst int64
	// Name names the quota policy in the RateLimit-Policy header; empty means
	// "default" for the first limit of a limiter and the limit's String for the others.
	Name string
	// Calendar, when set, aligns the windows to calendar days, weeks or months
	// in Zone (see [CalendarUnit], [Monthly]); Period is then the unit's
	// nominal length (24h, 168h, 720h; 0 means that), used for display only.
	// Only the fixed and sliding windows take a calendar limit.
	Calendar CalendarUnit
	// Zone is a calendar limit's IANA time zone ("Europe/Berlin"); "" is UTC.
	Zone string
	// AnchorDay is the day a calendar month's windows start on (1 to 31; a
	// month with fewer days starts on its last), or a calendar week's ISO
	// weekday (1 Monday to 7 Sunday); 0 is the 1st, or Monday.
	AnchorDay int
}

// PerSecond returns a limit of rate events per second, with a burst of rate.
func PerSecond(rate int64) Limit { return Every(rate, time.Second) }

// PerMinute returns a limit of rate events per minute, with a burst of rate.
func PerMinute(rate int64) Limit { return Every(rate, time.Minute) }

// PerHour returns a limit of rate events per hour, with a burst of rate.
func PerHour(rate int64) Limit { return Every(rate, time.Hour) }

// Every returns a limit of rate events per period, with a burst of rate.
func Every(rate int64, period time.Duration) Limit {
	return Limit{Rate: rate, Period: period, Burst: rate}
}

// WithBurst returns a copy of l with the given burst.
func (l Limit) WithBurst(burst int64) Limit { l.Burst = burst; return l }

// Named returns a copy of l with the given policy name.
func (l Limit) Named(name string) Limit { l.Name = name; return l }

// Validate reports why l cannot be enforced, with an error wrapping
// ErrInvalidLimit, or nil.
func (l Limit) Validate() error {
	if l.Calendar != 0 || l.Zone != "" || l.AnchorDay != 0 {
		if err := l.validateCalendar(); err != nil {
			return err
		}
		l.Period = l.Calendar.nominal()
	}
	switch {
	case l.Rate <= 0:
		return fmt.Errorf("%w: rate must be positive, got %d", ErrInvalidLimit, l.Rate)
	case l.Period <= 0:
		return fmt.Errorf("%w: period must be positive, got %s", ErrInvalidLimit, l.Period)
	case l.Period > MaxPeriod:
		return fmt.Errorf("%w: period %s is longer than the maximum %s", ErrInvalidLimit, l.Period, MaxPeriod)
	case l.Period%time.Microsecond != 0:
		return fmt.Errorf("%w: period %s is not a whole number of microseconds", ErrInvalidLimit, l.Period)
	case l.Burst < 0:
		return fmt.Errorf("%w: burst must not be negative, got %d", ErrInvalidLimit, l.Burst)
	case l.Rate > l.periodMicros():
		return fmt.Errorf("%w: rate %d per %s is more than one event per microsecond", ErrInvalidLimit, l.Rate, l.Period)
	}
	if b := l.burst(); b > MaxPeriod.Microseconds()/l.interval() {
		return fmt.Errorf("%w: burst %d at one event per %s spans more than %s", ErrInvalidLimit, b, time.Duration(l.interval())*time.Microsecond, MaxPeriod)
	}
	if strings.ContainsAny(l.Name, "\"\\\r\n") {
		return fmt.Errorf("%w: name %q may not hold quotes, backslashes or line breaks", ErrInvalidLimit, l.Name)
	}
	return nil
}

// burst is the effective burst: Burst, or Rate when Burst is 0.
func (l Limit) burst() int64 {
	if l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

// EffectiveBurst returns Burst, or Rate when Burst is 0.
func (l Limit) EffectiveBurst() int64 { return l.burst() }

func (l Limit) periodMicros() int64 { return int64(l.Period / time.Microsecond) }

// interval is the emission interval Period/Rate in microseconds, rounded up so
// the limit is never exceeded.
func (l Limit) interval() int64 {
	p := l.periodMicros()
	return (p + l.Rate - 1) / l.Rate
}

// EmissionInterval returns Period/Rate rounded up to a whole microsecond: the
// spacing of events at the sustained rate, as the algorithms use it.
func (l Limit) EmissionInterval() time.Duration {
	return time.Duration(l.interval()) * time.Microsecond
}

// String formats l as ParseLimit reads it: "10/s", "100/m", "5/30s",
// "10/s burst 20" when the burst differs from the rate, and for calendar
// limits "10000/month", "500/week anchor 3", "1000/day in Europe/Berlin"
// ("1000/day in UTC" for a calendar day in UTC).
func (l Limit) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(l.Rate, 10))
	b.WriteByte('/')
	if l.Calendar != 0 {
		b.WriteString(l.Calendar.String())
		switch {
		case l.Zone != "":
			b.WriteString(" in ")
			b.WriteString(l.Zone)
		case l.Calendar == CalendarDay:
			b.WriteString(" in UTC") // "N/day" alone is 24 hours
		}
		if l.AnchorDay != 0 {
			b.WriteString(" anchor ")
			b.WriteString(strconv.Itoa(l.AnchorDay))
		}
	} else {
		b.WriteString(formatPeriod(l.Period))
	}
	if bu := l.burst(); bu != l.Rate {
		b.WriteString(" burst ")
		b.WriteString(strconv.FormatInt(bu, 10))
	}
	return b.String()
}

func formatPeriod(d time.Duration) string {
	switch d {
	case time.Second:
		return "s"
	case time.Minute:
		return "m"
	case time.Hour:
		return "h"
	case 24 * time.Hour:
		return "d"
	}
	return d.String()
}

var unitPeriods = map[string]time.Duration{
	"ms": time.Millisecond, "s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// badPeriod is the error about a period ParseLimit cannot read: it lists
// every unit and the ways to write a multiple of one.
const badPeriod = "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), " +
	"a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"

// parsePeriod reads a limit's period: a unit ("m"), a whole multiple of one
// ("15min", "7d"), or a Go duration ("1h30m").
func parsePeriod(s string) (time.Duration, bool) {
	if d, ok := unitPeriods[s]; ok {
		return d, true
	}
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if unit, ok := unitPeriods[s[digits:]]; ok && digits > 0 && digits <= 9 {
		n, err := strconv.ParseInt(s[:digits], 10, 64)
		if err == nil && n <= math.MaxInt64/int64(unit) { // Validate judges the size
			return time.Duration(n) * unit, true
		}
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// ParseLimit reads a limit written as RATE/PERIOD, optionally followed by
// " burst N" (and, for calendar limits, " in ZONE" and " anchor D"): "10/s", "100/m", "1000/h", "5000/d", "5/30s", "100/1m30s",
// "10/s burst 20". PERIOD is a unit (ms, s, m, h, d, or sec, min, hr, hour,
// day and their plurals), a whole multiple of one such as 15min or 7d, or a Go
// duration such as 30s or 1h30m. A calendar limit's PERIOD is week or month,
// or day with a zone, and takes " in ZONE" (an IANA time zone; UTC when
// absent) and " anchor D" (see [Limit.AnchoredOn]): "10000/month",
// "500/week", "1000/day in Europe/Berlin", "10000/month in America/New_York
// anchor 15". "1000/day" alone is 1000 per 24 hours (for the windows, days
// from UTC midnight: a calendar day in UTC). It returns an error wrapping
// ErrInvalidLimit for anything else, or for a limit that cannot be enforced.
func ParseLimit(s string) (Limit, error) {
	orig := s
	s = strings.TrimSpace(s)
	bad := func(why string) (Limit, error) {
		return Limit{}, fmt.Errorf("%w: %q: %s (want RATE/PERIOD such as 10/s, 100/m or 5/30s)", ErrInvalidLimit, truncate(orig), why)
	}
	head, cl, why := splitClauses(s)
	if why != "" {
		return bad(why)
	}
	rateStr, periodStr, ok := strings.Cut(head, "/")
	if !ok {
		return bad("no '/'")
	}
	rate, err := strconv.ParseInt(strings.TrimSpace(rateStr), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return bad("rate is out of range")
	} else if err != nil {
		return bad("rate is not a whole number")
	}
	l, why := cl.limit(rate, strings.TrimSpace(periodStr))
	if why != "" {
		return bad(why)
	}
	if err := l.Validate(); err != nil {
		why := strings.TrimPrefix(err.Error(), ErrInvalidLimit.Error()+": ")
		return Limit{}, fmt.Errorf("%w: %q: %s", ErrInvalidLimit, truncate(orig), why)
	}
	return l, nil
}

// truncate keeps error messages short when the input is long or hostile.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
