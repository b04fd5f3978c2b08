package luascript

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// skewed answers a calendar call as a Redis whose clock is at serverNow
// would: {-1, now} while the bounds it is sent do not hold its now (every
// one, with always), otherwise a fresh key's state.
type skewed struct {
	serverNow int64
	always    bool
	calls     []string // the bounds text of each call's first limit
}

func (s *skewed) Eval(_ context.Context, script *Script, keys, args []string, dst []int64) ([]int64, error) {
	if script != calendarScripts[core.FixedWindow] {
		return dst, errors.New("not the calendar script")
	}
	s.calls = append(s.calls, args[2])
	b := strings.Split(args[2], ",")
	lo, _ := strconv.ParseInt(b[1], 10, 64)
	hi, _ := strconv.ParseInt(b[4], 10, 64)
	if s.always || s.serverNow < lo || s.serverNow >= hi {
		return append(dst, -1, s.serverNow), nil
	}
	return append(dst, 1, s.serverNow, 0, 0, 0), nil
}

// On Redis's clock, a calendar call carries the bounds around this
// process's clock; when Redis's now is in none of their windows (the clocks
// differ by more than a window), the script writes nothing and says its
// now, and one more call carries the bounds around it.
func TestCalendarBoundsFollowRedisClock(t *testing.T) {
	local := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	server := time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC) // two months ahead
	b := &skewed{serverNow: core.Micros(server)}
	s, err := New(b, WithLocalCache(0))
	must.NoError(t, err)
	s.now = func() time.Time { return local }
	req := core.TakeRequest{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(5)}, Cost: 1, Now: local}
	d, err := s.Take(context.Background(), req)
	must.NoError(t, err)
	must.True(t, d.Allowed)
	must.Len(t, b.calls, 2)
	starts := func(text string) string {
		var out []string
		for _, f := range strings.Split(text, ",") {
			us, _ := strconv.ParseInt(f, 10, 64)
			out = append(out, time.UnixMicro(us).UTC().Format("01-02"))
		}
		return strings.Join(out, " ")
	}
	must.Equal(t, "01-01 02-01 03-01 04-01 05-01 06-01", starts(b.calls[0]), "around this process's clock")
	must.Equal(t, "04-01 05-01 06-01 07-01 08-01 09-01", starts(b.calls[1]), "around Redis's")
	must.Equal(t, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), server.Add(d.ResetAfter), "the decision at Redis's now: July 1st")

	// A Redis that never agrees: an error, after two calls.
	b = &skewed{serverNow: core.Micros(server), always: true}
	s, err = New(b, WithLocalCache(0))
	must.NoError(t, err)
	_, err = s.Take(context.Background(), req)
	must.ErrorIs(t, err, ErrRedis)
	must.ErrorIs(t, err, errCalendarClock)
	must.Len(t, b.calls, 2)
}

// A calendar request that no script can decide is refused before Redis is
// asked: a meter, an unknown zone, a debt.
func TestCalendarRefused(t *testing.T) {
	for _, req := range []core.TakeRequest{
		{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.Monthly(5)}, Cost: 1},
		{Key: "k", Algorithm: core.SlidingLog, Limits: []core.Limit{core.Daily(5).In("Europe/Berlin")}, Cost: 1},
		{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(5).In("Nowhere/Atlantis")}, Cost: 1},
		{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(5).AnchoredOn(40)}, Cost: 1},
		{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(5)}, Cost: 1, MaxDebt: 3},
	} {
		rec := &recorder{err: errRecorded}
		s, err := New(rec, WithLocalCache(0))
		must.NoError(t, err)
		_, err = s.Take(context.Background(), req)
		must.Error(t, err)
		must.True(t, errors.Is(err, core.ErrInvalidLimit) || errors.Is(err, core.ErrInvalidOption) || errors.Is(err, core.ErrUnsupported), err)
		must.Equal(t, 0, rec.calls, "Redis is not asked")
	}
}

// The bounds text of a limit is built once per window, whatever the number
// of requests in it.
func TestCalendarBoundsCached(t *testing.T) {
	e, err := encodeLimit(core.Monthly(5).In("Asia/Tokyo"))
	must.NoError(t, err)
	req := core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{core.Monthly(5).In("Asia/Tokyo")}}
	at := core.Micros(time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC))
	b, ok := req.CalendarBounds(0, at)
	must.True(t, ok)
	first := e.withBounds(b)
	must.Equal(t, 0.0, testing.AllocsPerRun(100, func() {
		b, _ := req.CalendarBounds(0, at+1)
		if e.withBounds(b) != first {
			t.Fatal("a new encoding in the same window")
		}
	}))
}
