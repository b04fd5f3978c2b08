package core

import (
	"fmt"
	"math/bits"
	"time"
)

// State is one key's state under one limit, as the algorithms read and write it.
// The zero State is a key never seen. Times are microseconds since the Unix epoch
// (see [Micros]).
type State struct {
	// T is the meters' theoretical arrival time (for the token bucket, the
	// instant it is full again), or the start of the current window.
	T int64
	// N is the current window's count, or the sliding log's length.
	N int64
	// P is the previous window's count (sliding window).
	P int64
	// Log is the sliding log's ring of timestamps, oldest at Head.
	Log  []int64
	Head int
}

// Micros returns t as microseconds since the Unix epoch, the unit of every State.
func Micros(t time.Time) int64 { return t.UnixMicro() }

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// params are a limit's figures in microseconds, computed once per limit.
type params struct {
	rate, period, burst, interval, tau int64
	// debt is the debt bound (WithDebt): µs beyond tau for the meters,
	// counts above rate for the windows (see settle.go).
	debt int64
	// Division by interval without a divide instruction: for n < 2^53,
	// n / interval == hi64(n * magic) >> shift (see divInterval).
	magic uint64
	shift uint8
	// cal is a calendar limit's calendar (nil for every other limit): its
	// windows, not period, say where a window starts and ends.
	cal *calendar
}

// paramsOf checks l and converts it into buf.
func paramsOf(l *Limit, buf *params) (*params, error) {
	p, err := computeParams(*l)
	*buf = p
	return buf, err
}

func computeParams(l Limit) (params, error) {
	var cal *calendar
	if l.Calendar != 0 || l.Zone != "" || l.AnchorDay != 0 {
		var err error
		if cal, err = calendarOf(&l); err != nil {
			return params{}, err
		}
		l.Period = l.Calendar.nominal()
	}
	p := params{rate: l.Rate, period: l.periodMicros(), burst: l.burst(), cal: cal}
	if p.rate <= 0 || l.Period <= 0 || l.Period > MaxPeriod || l.Period%time.Microsecond != 0 || l.Burst < 0 || p.rate > p.period {
		return params{}, fmt.Errorf("%w: %d per %s", ErrInvalidLimit, l.Rate, l.Period)
	}
	p.interval = (p.period + p.rate - 1) / p.rate
	hi, lo := bits.Mul64(uint64(p.burst), uint64(p.interval))
	if hi != 0 || lo > uint64(MaxPeriod/time.Microsecond) {
		return params{}, fmt.Errorf("%w: burst %d too large", ErrInvalidLimit, l.Burst)
	}
	p.tau = int64(lo)
	// With s = floor(log2(interval)) and magic = ceil(2^(64+s) / interval),
	// hi64(n*magic) >> s is exact for every n < 2^53: the rounding error of
	// magic, times n, stays below 2^(64+s) / interval. A power of two is a
	// plain shift.
	d := uint64(p.interval)
	p.shift = uint8(bits.Len64(d) - 1)
	if d&(d-1) != 0 {
		q, r := bits.Div64(uint64(1)<<p.shift, 0, d)
		p.magic = q
		if r != 0 {
			p.magic++
		}
	}
	return p, nil
}

// divInterval returns n / interval for 0 <= n < 2^53.
func (p *params) divInterval(n int64) int64 {
	if p.magic == 0 {
		return n >> p.shift
	}
	hi, _ := bits.Mul64(uint64(n), p.magic)
	return int64(hi >> p.shift)
}

// applyPrepared decides under one limit whose figures are p, into d; the
// arguments have been checked.
func (a Algorithm) applyPrepared(d *Decision, s *State, l *Limit, p *params, cost, now int64) {
	switch a {
	case GCRA, TokenBucket, LeakyBucket:
		meterInto(d, s, p, cost, now, true, a == LeakyBucket)
	default:
		if cost > 0 {
			a.rebase(s, p, now)
		}
		*d = a.decide(s, p, cost, now, true)
	}
	d.Limit, d.Index = *l, 0
}

// ApplyAll decides one request against one or several limits, each with its
// own state (states[i] belongs to limits[i]). The request is admitted only if
// every limit admits it, and a denied request changes none of the states,
// except that a spend (cost > 0) rebases state a clock that stepped back left
// in the future to "empty at now" (see window.go's "Clock steps back"). The
// decision's Limit and Index name the governing limit: the denying one with the
// longest RetryAfter, or, when all admit, the one with the least remaining.
func (a Algorithm) ApplyAll(states []State, limits []Limit, cost, now int64) (Decision, error) {
	if len(states) != len(limits) || len(limits) == 0 {
		return Decision{}, fmt.Errorf("%w: %d states for %d limits", ErrInvalidLimit, len(states), len(limits))
	}
	if len(limits) > maxLimits {
		return a.applyMany(states, limits, cost, now)
	}
	// The figures live on the stack: no allocation.
	var bufs [maxLimits]params
	var ptrs [maxLimits]*params
	for i := range limits {
		p, err := check(a, &limits[i], cost, now, &bufs[i])
		if err != nil {
			return Decision{}, err
		}
		ptrs[i] = p
	}
	pp := ptrs[:len(limits)]
	var d Decision
	a.applyAll(&d, states, limits, pp, cost, now)
	return d, nil
}

// applyMany is ApplyAll for more limits than its stack holds.
func (a Algorithm) applyMany(states []State, limits []Limit, cost, now int64) (Decision, error) {
	pp := make([]*params, len(limits))
	for i := range limits {
		p, err := check(a, &limits[i], cost, now, new(params))
		if err != nil {
			return Decision{}, err
		}
		pp[i] = p
	}
	var d Decision
	a.applyAll(&d, states, limits, pp, cost, now)
	return d, nil
}

// applyAll is ApplyAll once the arguments are checked and pp holds the
// limits' figures.
func (a Algorithm) applyAll(best *Decision, states []State, limits []Limit, pp []*params, cost, now int64) {
	if len(limits) == 1 {
		a.applyPrepared(best, &states[0], &limits[0], pp[0], cost, now)
		return
	}
	allowed := true
	for i := range limits {
		if cost > 0 { // a spend, admitted or not, rebases (see rebase)
			a.rebase(&states[i], pp[i], now)
		}
		d := a.decide(&states[i], pp[i], cost, now, false)
		d.Limit, d.Index = limits[i], i
		if i == 0 || governs(d, *best) {
			*best = d
		}
		allowed = allowed && d.Allowed
	}
	if !allowed {
		return
	}
	var delay time.Duration
	for i := range limits {
		d := a.decide(&states[i], pp[i], cost, now, true)
		d.Limit, d.Index = limits[i], i
		if i == 0 || governs(d, *best) {
			*best = d
		}
		delay = max(delay, d.Delay)
	}
	// An admitted request waits for its slot under every limit: the longest
	// Delay, whichever limit governs.
	best.Delay = delay
}

// governs reports whether d should replace cur as the governing decision.
func governs(d, cur Decision) bool {
	switch {
	case d.Allowed != cur.Allowed:
		return !d.Allowed
	case !d.Allowed && d.Exceeds != cur.Exceeds:
		return d.Exceeds
	case !d.Allowed:
		return d.RetryAfter > cur.RetryAfter
	default:
		return d.Remaining < cur.Remaining
	}
}

// validArgs reports whether check would accept a, cost and now.
func validArgs(a Algorithm, cost, now int64) bool {
	return a.valid() && cost >= 0 && now >= 0 && now <= MaxTime
}

func check(a Algorithm, l *Limit, cost, now int64, buf *params) (*params, error) {
	if !a.valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidAlgorithm, uint8(a))
	}
	if cost < 0 {
		return nil, fmt.Errorf("%w: %d is negative", ErrInvalidCost, cost)
	}
	if now < 0 || now > MaxTime {
		return nil, fmt.Errorf("%w: %d µs since the epoch", ErrClock, now)
	}
	if l.Calendar != 0 && a != FixedWindow && a != SlidingWindow {
		return nil, a.ValidateLimit(*l) // the meters and the log take no calendar
	}
	return paramsOf(l, buf)
}

func (a Algorithm) decide(s *State, p *params, cost, now int64, commit bool) Decision {
	switch a {
	case TokenBucket:
		return tokenBucket(s, p, cost, now, commit)
	case LeakyBucket:
		return leakyBucket(s, p, cost, now, commit)
	case FixedWindow:
		return fixedWindow(s, p, cost, now, commit)
	case SlidingLog:
		return slidingLog(s, p, cost, now, commit)
	case SlidingWindow:
		return slidingWindow(s, p, cost, now, commit)
	default:
		return gcra(s, p, cost, now, commit)
	}
}

// freshAt returns the instant (µs since the epoch) from which s is
// indistinguishable from a fresh State under l, so a store may drop it; 0 for a
// fresh State.
func (a Algorithm) freshAt(s *State, l *Limit) int64 {
	p := l.periodMicros()
	switch a {
	case FixedWindow:
		if s.N == 0 {
			return 0
		}
		if l.Calendar != 0 {
			return calendarFreshAt(s, l, false)
		}
		return s.T + p
	case SlidingWindow:
		if s.N == 0 && s.P == 0 {
			return 0
		}
		if l.Calendar != 0 {
			return calendarFreshAt(s, l, true)
		}
		return s.T + 2*p
	case SlidingLog:
		if s.N == 0 {
			return 0
		}
		return s.Log[(s.Head+int(s.N)-1)%len(s.Log)] + p
	default:
		return s.T
	}
}
