package rules

import (
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// A policy's calendar fields: time_zone and anchor_day set the zone and the
// anchor day of the policy's calendar limits (N/month, N/week, and N/day,
// which a time_zone makes a calendar day in that zone) that name none in
// their own text ("10000/month in America/New_York anchor 15" keeps its
// own).

// decodeTimeZone reads a time_zone: an IANA time zone name, such as
// Europe/Berlin, that the tz database knows.
func decodeTimeZone(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s, ok := d.str(v, at)
	if !ok {
		return
	}
	if err := core.Monthly(1).In(s).Validate(); err != nil {
		d.fail(deref(v), at, err, "%v", err)
		return
	}
	p.TimeZone = s
}

// decodeAnchorDay reads an anchor_day: 1 to 31 (a month's day; 1 to 7, an
// ISO weekday, for a week).
func decodeAnchorDay(d *decoder, v *yaml.Node, at *path, p *Policy) {
	n, ok := d.integer(v, at)
	if !ok {
		return
	}
	if n < 1 || n > 31 {
		d.fail(deref(v), at, nil, "anchor_day %d is not a day of the month from 1 to 31 (or an ISO weekday from 1, Monday, to 7 for a weekly limit)", n)
		return
	}
	p.AnchorDay = int(n)
}

// policyCalendar applies the policy's time_zone and anchor_day to its
// calendar limits (its own, its tiers', its overrides'), and reports, at
// the field, one set on the policy that no limit takes: a time_zone with no
// calendar limit, an anchor_day with no monthly or weekly one, or one above
// 7 with a weekly one. It returns the names of the fields with problems.
func (d *decoder) policyCalendar(present map[string]*yaml.Node, at *path, p *Policy) []string {
	if p.TimeZone == "" && p.AnchorDay == 0 {
		return nil
	}
	var zoned, anchored, weekly bool
	apply := func(limits []core.Limit) {
		for i := range limits {
			l := &limits[i]
			if l.Calendar == 0 && (p.TimeZone == "" || l.Period != 24*time.Hour) {
				continue
			}
			if l.Calendar == 0 {
				l.Calendar, l.Zone = core.CalendarDay, p.TimeZone // N/day becomes the zone's days
			} else if l.Zone == "" && p.TimeZone != "" {
				*l = l.In(p.TimeZone)
			}
			zoned = true
			weekly = weekly || l.Calendar == core.CalendarWeek && l.AnchorDay == 0
			if l.Calendar != core.CalendarDay && l.AnchorDay == 0 && p.AnchorDay != 0 &&
				(l.Calendar == core.CalendarMonth || p.AnchorDay <= 7) { // a week past 7 is reported below
				l.AnchorDay = p.AnchorDay
			}
			anchored = anchored || l.Calendar != core.CalendarDay
		}
	}
	apply(p.Limits)
	if p.Tiers != nil {
		for i := range p.Tiers.Levels {
			apply(p.Tiers.Levels[i].Limits)
		}
	}
	for i := range p.Overrides {
		apply(p.Overrides[i].Limits)
	}
	var failed []string
	if v := present["time_zone"]; v != nil && !zoned {
		d.fail(deref(v), at.dot("time_zone"), nil, "time_zone applies to calendar limits (N/month, N/week, N/day) and this policy has none")
		failed = append(failed, "time_zone")
	}
	if v := present["anchor_day"]; v != nil && (!anchored || weekly && p.AnchorDay > 7) {
		why := "anchor_day applies to monthly and weekly limits (N/month, N/week) and this policy has none"
		if anchored {
			why = "a weekly limit's anchor_day is an ISO weekday from 1 (Monday) to 7 (Sunday)"
		}
		d.fail(deref(v), at.dot("anchor_day"), nil, "%s", why)
		failed = append(failed, "anchor_day")
	}
	return failed
}
