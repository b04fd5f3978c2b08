package core

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// limitClauses are what ParseLimit reads after RATE/PERIOD: " burst N",
// " in ZONE", " anchor D", in any order, each at most once.
type limitClauses struct {
	burst     int64
	zone      string
	anchor    int
	hasZone   bool
	hasAnchor bool
}

// splitClauses cuts s into RATE/PERIOD and its clauses, or returns why it
// cannot. A keyword with no value after it is left in RATE/PERIOD (where it
// makes a bad period).
func splitClauses(s string) (string, limitClauses, string) {
	var cl limitClauses
	fields := strings.Fields(s)
	first := len(fields)
	for i := 1; i+1 < len(fields); i++ {
		if isClauseWord(fields[i]) {
			first = i
			break
		}
	}
	if (len(fields)-first)%2 != 0 {
		return "", cl, "a burst, in or anchor clause needs a value"
	}
	seen := map[string]bool{}
	for i := first; i < len(fields); i += 2 {
		word, val := fields[i], fields[i+1]
		if !isClauseWord(word) {
			return "", cl, "after RATE/PERIOD only burst N, in ZONE and anchor D may follow, got " + strconv.Quote(truncate(word))
		}
		if seen[word] {
			return "", cl, word + " is given twice"
		}
		seen[word] = true
		if why := cl.set(word, val); why != "" {
			return "", cl, why
		}
	}
	return strings.Join(fields[:first], " "), cl, ""
}

func isClauseWord(w string) bool { return w == "burst" || w == "in" || w == "anchor" }

func (cl *limitClauses) set(word, val string) string {
	switch word {
	case "in":
		cl.zone, cl.hasZone = val, true
		if val == "UTC" {
			cl.zone = ""
		}
	case "anchor":
		d, err := strconv.Atoi(val)
		if err != nil || d < 1 || d > 31 {
			return "anchor day " + strconv.Quote(truncate(val)) + " is not a day from 1 to 31 (a weekday from 1 to 7 for a week)"
		}
		cl.anchor, cl.hasAnchor = d, true
	default:
		b, err := strconv.ParseInt(val, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return "burst is out of range"
		case err != nil:
			return "burst is not a whole number"
		case b <= 0:
			return "burst must be positive"
		}
		cl.burst = b
	}
	return ""
}

// calendarPeriods are the periods that are calendar units by themselves.
var calendarPeriods = map[string]CalendarUnit{
	"week": CalendarWeek, "weeks": CalendarWeek, "month": CalendarMonth, "months": CalendarMonth,
}

// limit builds the limit of rate per period (the text after '/') with the
// clauses, or returns why it cannot; Validate judges the figures.
func (cl *limitClauses) limit(rate int64, period string) (Limit, string) {
	l := Limit{Rate: rate, Burst: cl.burst}
	if cl.burst == 0 {
		l.Burst = rate
	}
	unit, isCal := calendarPeriods[period]
	if !isCal && (cl.hasZone || cl.hasAnchor) {
		if d, ok := unitPeriods[period]; !ok || d != 24*time.Hour {
			return Limit{}, "a time zone or anchor day needs a calendar period: day, week or month"
		}
		unit, isCal = CalendarDay, true
	}
	if isCal {
		l.Calendar, l.Period, l.Zone, l.AnchorDay = unit, unit.nominal(), cl.zone, cl.anchor
		return l, ""
	}
	d, ok := parsePeriod(period)
	if !ok {
		return Limit{}, badPeriod
	}
	l.Period = d
	return l, ""
}
