package main

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// calendarPeekLine is key show's line for a limit set governed by a
// calendar quota: what is left of it until the calendar boundary, and the
// boundary's instant in the quota's zone (a month, a week or a day ends
// when its zone's clocks say, daylight saving and month lengths included).
func calendarPeekLine(name string, d core.Decision, now time.Time) string {
	_, end, err := d.Limit.WindowAt(now)
	if err != nil { // a limit the rules accepted is valid; say what is known
		return fmt.Sprintf("%s: %s: remaining %d", name, d.Limit, d.Remaining)
	}
	return fmt.Sprintf("%s: %s: remaining %d until the boundary at %s (in %s)",
		name, d.Limit, d.Remaining, end.Format(time.RFC3339), end.Sub(now).Round(time.Second))
}
