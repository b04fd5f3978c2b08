package flags

import (
	"flag"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// Calendar quotas: -limit N/month and N/week count per calendar month and
// week, and, with -tz or -anchor-day given, N/day per calendar day; -tz
// names the time zone their windows follow and -anchor-day the day a month
// starts on.

// defineCalendar declares -tz and -anchor-day on fs.
func (r *rawFlags) defineCalendar(fs *flag.FlagSet) {
	fs.StringVar(&r.tz, "tz", "UTC", "the IANA time `ZONE` of a calendar -limit (N/month, N/week, N/day), such as\nEurope/Berlin: its windows start at local midnight there (a day across a daylight\nsaving change lasts 23 or 25 hours); with it, N/day is a calendar day")
	fs.IntVar(&r.anchorDay, "anchor-day", 0, "the day `D` a -limit N/month starts on, 1 to 31 (a billing day; on a month with fewer\ndays, its last), or the ISO weekday of N/week, 1 (Monday) to 7; 0: the 1st, Monday")
}

// parseCalendar applies -tz and -anchor-day to the policy's calendar limits
// (-limit and every -tier's), N/day becoming a calendar day when either is
// given, and checks that the algorithm takes them: only fixed-window and
// sliding-window count per calendar window.
func (c *Config) parseCalendar(r *rawFlags) error {
	tzSet, anchorSet := r.set["tz"], r.set["anchor-day"]
	if !tzSet && !anchorSet {
		return nil
	}
	zone := r.tz
	if zone == "UTC" {
		zone = ""
	}
	if err := core.Monthly(1).In(zone).Validate(); err != nil {
		return usageErr("-tz %q: unknown time zone: want an IANA name such as Europe/Berlin or America/New_York", r.tz)
	}
	if anchorSet && (r.anchorDay < 1 || r.anchorDay > 31) {
		return usageErr("-anchor-day %d: want a day of the month from 1 to 31 (an ISO weekday from 1 to 7 for N/week)", r.anchorDay)
	}
	calendarOf := func(l core.Limit, flag string) (core.Limit, error) {
		switch {
		case l.Calendar == 0 && l.Period != 24*time.Hour:
			return l, usageErr("%s %s: -tz and -anchor-day apply to calendar limits, N/month, N/week or N/day", flag, l)
		case l.Calendar == 0:
			l = core.Daily(l.Rate).Named(l.Name)
		}
		if l.Zone == "" {
			l = l.In(zone)
		}
		if anchorSet {
			if l.Calendar == core.CalendarDay {
				return l, usageErr("%s %s: -anchor-day applies to N/month and N/week, not to days", flag, l)
			}
			l = l.AnchoredOn(r.anchorDay)
		}
		if err := c.Algorithm.ValidateLimit(l); err != nil {
			return l, usageErr("%s %s with -algorithm %s: %v", flag, l, c.Algorithm, err)
		}
		return l, nil
	}
	for i := range c.Tiers {
		l, err := calendarOf(c.Tiers[i].Limit, "-tier "+strconv.Quote(c.Tiers[i].Name))
		if err != nil {
			return err
		}
		c.Tiers[i].Limit = l
	}
	if len(c.Tiers) > 0 {
		c.Limit = c.Tiers[0].Limit
		return nil
	}
	l, err := calendarOf(c.Limit, "-limit")
	c.Limit = l
	return err
}
