package luascript

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// The encoder: a request becomes one script call, KEYS then ARGV, all strings.
// keys.go names the keys.

// serverTime is the now argument when the script is to read the server's
// TIME (with a TTL floor; with none, the call sends no now).
const serverTime = "-1"

// maxStackLimits is how many limits' encodings a request holds on the stack.
const maxStackLimits = 8

// checkRequest mirrors core's checks, in core's order, so a store reports what
// TakeRequest.Decide would (the same sentinels: core.ErrInvalidLimit,
// core.ErrInvalidAlgorithm, core.ErrClock), and appends
// the limits' encodings to dst. A decision (take) also checks, when the
// caller's clock decides (callerNow), the time now; a reset does not. Every
// cost is valid: a negative one is a refund.
func checkRequest(req core.TakeRequest, take, callerNow bool, now int64, dst []*encodedLimit) ([]*encodedLimit, error) {
	if len(req.Limits) == 0 {
		return nil, fmt.Errorf("%w: no limits", core.ErrInvalidLimit)
	}
	for _, l := range req.Limits {
		if err := req.Algorithm.Validate(); err != nil {
			return nil, err
		}
		if take && callerNow && (now < 0 || now > core.MaxTime) {
			return nil, fmt.Errorf("%w: %d µs since the epoch", core.ErrClock, now)
		}
		e, err := encodeLimit(l)
		if err != nil {
			return nil, err
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// appendCall appends to dst the call that decides req, checked into encs: one
// key per limit (KEYS), then ARGV: the cost; two figures per limit, interval
// and tau (µs) for the meters, rate and period (µs) for the windows and the
// sliding log; for a refund, the admission's age (µs, see refundAge); and,
// unless the store runs on Redis's clock with no TTL floor and the call is
// not a refund, now (µs, or serverTime) and the minimum TTL (ms); and for a
// refund, the channel and payload of its announcement (announce.go). Every
// argument costs Redis a string per call, so a spend on the defaults sends
// none. The keys are dst's first len(encs) new
// entries.
func (c *config) appendCall(dst []string, req core.TakeRequest, now int64, encs []*encodedLimit) []string {
	dst = c.appendKeys(dst, req, encs)
	dst = appendFigures(dst, req, encs)
	if req.Cost < 0 {
		age := refundAge(req)
		if now < 0 && req.Algorithm == core.SlidingLog {
			age = max(0, age-logRefundSlack(encs))
		}
		dst = append(dst, strconv.FormatInt(age, 10))
	}
	if c.sendsNow(req, now) {
		t := serverTime
		if now >= 0 {
			t = strconv.FormatInt(now, 10)
		}
		dst = append(dst, t, c.minTTLArg)
	}
	if req.Cost < 0 {
		dst = append(dst, c.channel, announcement(keyAddress(req.Namespace, req.Key)))
	}
	return dst
}

// shortOneCall drops the cost from call, a meter's call of one limit (its
// one key, then ARGV), when the cost is 1 and nothing follows the figures:
// the script reads ARGV {interval, tau} as a spend of 1 (luaMeterOneHead),
// an argument less for Redis to read on nearly every call.
func shortOneCall(call []string, req core.TakeRequest) []string {
	if req.Cost == 1 && len(call) == 4 {
		return append(call[:1], call[2:]...)
	}
	return call
}

// sendsNow reports whether appendCall sends now and the TTL floor for req
// (now is -1 on Redis's clock): on the caller's clock, with a TTL floor, and
// for a refund.
func (c *config) sendsNow(req core.TakeRequest, now int64) bool {
	return now >= 0 || c.minTTL > 0 || req.Cost < 0
}

// logRefundSlack is how much later than its age says a sliding-log refund on
// Redis's clock places the admission, in µs: a tenth of the shortest period,
// at most a second. The log holds the admission's entries at the instant
// Redis ran the spend, which the age, measured on the caller's clock between
// two calls that each took their own time to reach Redis, misses by that
// difference, either way; a refund that looked for them a few µs too early
// would find none. The price of the slack is that an entry up to that much
// newer than the admission's may go in its place, so one slot comes free up
// to that much early.
func logRefundSlack(encs []*encodedLimit) int64 {
	slack := int64(time.Second / time.Microsecond)
	for _, e := range encs {
		slack = min(slack, e.fig.period/10)
	}
	return slack
}

// refundAge is how long before req.Now the refunded cost was admitted, in
// µs: 0 for a zero Admitted or one after Now. A script places the admission
// at its own now minus the age, so on Redis's clock a skew between the
// caller's clock and Redis's never moves a refund into another window.
func refundAge(req core.TakeRequest) int64 {
	if req.Admitted.IsZero() {
		return 0
	}
	now := core.Micros(req.Now)
	return max(0, now-max(0, min(now, core.Micros(req.Admitted))))
}

// encodedLimit is one limit as the keys and the scripts take it, formatted
// once: limits come from configuration, so the same few are encoded on every
// request.
type encodedLimit struct {
	// fig are the limit's figures, which the local cache of denials hashes.
	fig figures
	// The figures the scripts take: interval and tau for the meters, rate
	// and period for the windows and the sliding log.
	interval, tau, rate, period string
	// calendar holds, for a calendar limit, its encoding with the bounds of
	// the window last asked for (calendar.go).
	calendar atomic.Pointer[calendarText]
}

// figures are a limit's values in whole microseconds, exactly as core's
// algorithms use them, so a script never divides differently from core.
type figures struct {
	rate, period, burst int64
	interval, tau       int64 // Period/Rate rounded up; Burst*interval
	// A calendar limit's unit, zone and anchor, which its windows follow
	// (calendar.go); zero for any other limit.
	unit   core.CalendarUnit
	zone   string
	anchor int
}

// figuresOf checks l as core does (an error wraps core.ErrInvalidLimit; the
// name is not the store's business) and returns its figures.
func figuresOf(l core.Limit) (figures, error) {
	l.Name = ""
	if err := l.Validate(); err != nil {
		return figures{}, err
	}
	iv, b := l.EmissionInterval().Microseconds(), l.EffectiveBurst()
	return figures{rate: l.Rate, period: l.Period.Microseconds(), burst: b, interval: iv, tau: b * iv,
		unit: l.Calendar, zone: l.Zone, anchor: l.AnchorDay}, nil
}

// limitCache maps figures to *encodedLimit, for up to maxCachedLimits
// limits; others are encoded on each use.
var (
	limitCache     sync.Map
	limitCacheSize atomic.Int64
)

const maxCachedLimits = 4096

// encodeLimit checks l as core does (an error wraps core.ErrInvalidLimit) and
// returns its encoding.
func encodeLimit(l core.Limit) (*encodedLimit, error) {
	f, err := figuresOf(l)
	if err != nil {
		return nil, err
	}
	if v, ok := limitCache.Load(f); ok {
		return v.(*encodedLimit), nil
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	e := &encodedLimit{
		fig:      f,
		interval: itoa(f.interval), tau: itoa(f.tau),
		rate: itoa(f.rate), period: itoa(f.period),
	}
	if limitCacheSize.Load() < maxCachedLimits {
		if _, loaded := limitCache.LoadOrStore(f, e); !loaded {
			limitCacheSize.Add(1)
		}
	}
	return e, nil
}

// callNow is the now a call of req sends: the caller's time (µs) in
// caller-clock mode, else -1, for the script to read Redis's TIME.
func (s *Store) callNow(req core.TakeRequest) int64 {
	if s.cfg.callerClock {
		return core.Micros(req.Now)
	}
	return -1
}

// appendFigures appends to dst the cost of req and its limits' figures
// (checked into encs), as every script takes them: interval and tau (µs)
// for the meters, rate and period (µs) for the windows and the sliding log.
func appendFigures(dst []string, req core.TakeRequest, encs []*encodedLimit) []string {
	dst = append(dst, strconv.FormatInt(req.Cost, 10))
	meter := req.Algorithm.OneWord()
	for _, e := range encs {
		if meter {
			dst = append(dst, e.interval, e.tau)
		} else {
			dst = append(dst, e.rate, e.period)
		}
	}
	return dst
}
