package luascript

import (
	"fmt"

	"github.com/ratewarden/ratewarden/core"
)

// CheckRequest implements core.StoreChecker: it refuses, when a limiter is
// built, the kinds of request the scripts cannot decide, so that they never
// fail at request time. Those are a debt bound (core.WithDebt) or a settle's
// charge beside a calendar limit, or beside a penalty box
// (core.WithBlockFor), and a charge or a debt bound under the sliding log.
// It sends nothing to Redis.
func (s *Store) CheckRequest(req core.TakeRequest) error {
	switch {
	case hasCalendar(&req):
		return checkCalendarDebt(req)
	case req.Charge || req.MaxDebt != 0:
		return checkSettle(req)
	case req.BlockFor != 0:
		return checkBlock(req)
	}
	return nil
}

// checkCalendarDebt refuses a debt bound or a charge beside a calendar
// limit: the calendar scripts take no debt.
func checkCalendarDebt(req core.TakeRequest) error {
	if req.Charge || req.MaxDebt != 0 {
		return fmt.Errorf("%w: the Redis store does not combine a calendar limit with a debt bound (core.WithDebt)", core.ErrUnsupported)
	}
	return nil
}
