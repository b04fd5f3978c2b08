package luascript

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// calendarScripts are the fixed and sliding window scripts of requests with
// a calendar limit (calendar_lua.go), indexed by the algorithm.
var calendarScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	s[core.FixedWindow] = newScript("fixed-window+calendar", calendarScript(false))
	s[core.SlidingWindow] = newScript("sliding-window+calendar", calendarScript(true))
	return s
}()

// blockCalendarScripts are the calendar scripts with the penalty box
// decided around them (block.go), for a calendar request with a BlockFor.
var blockCalendarScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		body, ok := strings.CutPrefix(calendarScripts[a].Source, "-- ratewarden "+a.String()+"+calendar\n"+luaNow)
		if ok {
			s[a] = newScript(a.String()+"+calendar+block", luaBlockHead+body+luaBlockTail)
		}
	}
	return s
}()

// CalendarScripts returns the scripts of requests with a calendar limit: the
// fixed window's and the sliding window's, then the same with the penalty
// box. A binding may SCRIPT LOAD them ahead of use, as it may Scripts.
func CalendarScripts() []*Script {
	return []*Script{calendarScripts[core.FixedWindow], calendarScripts[core.SlidingWindow],
		blockCalendarScripts[core.FixedWindow], blockCalendarScripts[core.SlidingWindow]}
}

// errCalendarClock is what a calendar request returns when Redis's clock is
// more than a window away from this process's twice in a row.
var errCalendarClock = errors.New("luascript: Redis's clock is more than a calendar window away from this process's")

// hasCalendar reports whether req has a calendar limit.
func hasCalendar(req *core.TakeRequest) bool {
	for i := range req.Limits {
		if req.Limits[i].Calendar != 0 {
			return true
		}
	}
	return false
}

// calendarText is a calendar limit's encoding with its bounds as the
// second figure, kept by the limit's encodedLimit for the window it is for.
type calendarText struct {
	bounds core.CalendarBounds
	enc    *encodedLimit
}

// withBounds returns e with b as its period figure (the text the calendar
// scripts read), cached for as long as b stays the bounds.
func (e *encodedLimit) withBounds(b core.CalendarBounds) *encodedLimit {
	if c := e.calendar.Load(); c != nil && c.bounds == b {
		return c.enc
	}
	buf := make([]byte, 0, 6*17)
	for i, v := range b {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, v, 10)
	}
	enc := &encodedLimit{fig: e.fig, interval: e.interval, tau: e.tau, rate: e.rate, period: string(buf)}
	e.calendar.Store(&calendarText{bounds: b, enc: enc})
	return enc
}

// checkCalendar checks a calendar request as Take checks any (checkRequest),
// and its limits under its algorithm and its penalty box, and returns its
// limits' encodings.
func (s *Store) checkCalendar(req core.TakeRequest, now int64, buf []*encodedLimit) ([]*encodedLimit, error) {
	encs, err := checkRequest(req, true, s.cfg.callerClock, now, buf)
	for i := 0; err == nil && i < len(req.Limits); i++ {
		err = req.Algorithm.ValidateLimit(req.Limits[i])
	}
	if err == nil && req.BlockFor != 0 {
		err = checkBlock(req)
	}
	return encs, err
}

// takeCalendar is Take for a request with a calendar limit: one call of the
// calendar script with each calendar limit's bounds around this process's
// now (or the caller's, in caller-clock mode), and a second only when
// Redis's clock is in none of the three windows they name. Denials are not
// cached locally.
func (s *Store) takeCalendar(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if err := checkCalendarDebt(req); err != nil {
		return core.Decision{}, err
	}
	now := s.callNow(req)
	var buf [maxStackLimits]*encodedLimit
	encs, err := s.checkCalendar(req, now, buf[:0])
	if err != nil {
		return core.Decision{}, err
	}
	at := now
	if at < 0 {
		at = core.Micros(s.now())
	}
	for range 2 {
		if err := ctx.Err(); err != nil {
			return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
		}
		for i, e := range encs {
			if b, ok := req.CalendarBounds(i, at); ok {
				encs[i] = e.withBounds(b)
			}
		}
		script, nk := calendarScripts[req.Algorithm], len(encs)
		var call []string
		if req.BlockFor != 0 { // the penalty box around the calendar script (block.go)
			script, nk, call = blockCalendarScripts[req.Algorithm], nk+1, s.cfg.appendBlockCall(make([]string, 0, 8+3*nk), req, now, encs)
		} else {
			call = s.cfg.appendCall(make([]string, 0, 6+3*nk), req, now, encs)
		}
		reply, err := s.backend.Eval(ctx, script, call[:nk], call[nk:], make([]int64, 0, 5+3*len(encs)))
		if req.Cost < 0 {
			s.dropKey(req)
		}
		if err != nil {
			return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
		}
		if miss := calendarMiss(req, reply); miss >= 0 {
			at = miss // Redis's now is in none of the windows: send the bounds around it
			continue
		}
		var d core.Decision
		if req.BlockFor != 0 {
			d, err = decodeBlock(req, reply)
		} else {
			d, err = decode(req, reply)
		}
		if err != nil {
			return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
		}
		return d, nil
	}
	return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, errCalendarClock)
}

// calendarMiss returns Redis's now when the calendar script replied that it
// is in none of the windows it was given ({-1, now}, followed by the
// block's three integers under a penalty box), and -1 otherwise.
func calendarMiss(req core.TakeRequest, reply []int64) int64 {
	if req.BlockFor != 0 && len(reply) >= 3 {
		reply = reply[:len(reply)-3]
	}
	if len(reply) == 2 && reply[0] == -1 && reply[1] >= 0 && reply[1] <= core.MaxTime {
		return reply[1]
	}
	return -1
}
