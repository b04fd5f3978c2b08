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
	// T is, for the token bucket, the instant the bucket is full again; for the
	// leaky bucket and GCRA, the theoretical arrival time; for the fixed and
	// sliding windows, the start of the current window. Unused by the sliding log.
	T int64
	// N is the count in the current window (fixed and sliding windows), or the
	// number of timestamps in Log (sliding log).
	N int64
	// P is the previous window's count (sliding window).
	P int64
	// Log is the sliding log's ring of admitted timestamps, oldest at Head. It
	// never holds more than Rate entries.
	Log  []int64
	Head int
}

// Micros returns t as microseconds since the Unix epoch, the unit of every State.
func Micros(t time.Time) int64 { return t.UnixMicro() }

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// params are a limit's figures in microseconds, computed once per limit.
type params struct {
	rate, period, burst, interval, tau int64
	// Division by interval without a divide instruction: for n < 2^53,
	// n / interval == hi64(n * magic) >> shift (see divInterval).
	magic uint64
	shift uint8
	// fp is the limit's fingerprint (see TakeRequest.Fingerprint).
	fp uint64
	// The exported fields these figures were computed from.
	fromRate, fromBurst int64
	fromPeriod          time.Duration
}

// paramsOf checks l cheaply and converts it, or returns the figures NewLimiter
// cached in it while they still match its exported fields.
func paramsOf(l *Limit, buf *params) (*params, error) {
	if c := l.prepared(); c != nil {
		return c, nil
	}
	p, err := computeParams(*l)
	*buf = p
	return buf, err
}

// prepared returns the figures NewLimiter cached in l, or nil when there are
// none or l was changed since.
func (l *Limit) prepared() *params {
	if c := l.prep; c != nil && c.fromRate == l.Rate && c.fromPeriod == l.Period && c.fromBurst == l.Burst {
		return c
	}
	return nil
}

func computeParams(l Limit) (params, error) {
	p := params{rate: l.Rate, period: l.periodMicros(), burst: l.burst()}
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
	p.fromRate, p.fromPeriod, p.fromBurst = l.Rate, l.Period, l.Burst
	p.fp = limitFingerprint(l)
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

// Apply decides a request of the given cost at time now under l, updating s
// when the request is admitted. It is a pure function of its arguments: it reads
// no clock and keeps nothing. It returns an error (and changes nothing) for a
// negative cost, an invalid algorithm or limit, or a time outside [0, MaxTime].
func (a Algorithm) Apply(s *State, l Limit, cost int64, now time.Time) (Decision, error) {
	return a.ApplyMicros(s, l, cost, Micros(now))
}

// ApplyMicros is Apply with now in microseconds since the Unix epoch.
func (a Algorithm) ApplyMicros(s *State, l Limit, cost, now int64) (Decision, error) {
	var d Decision
	err := a.ApplyInto(&d, s, &l, cost, now)
	return d, err
}

// ApplyInto is ApplyMicros writing the decision into d, for stores whose hot
// path should not copy decisions around. On error d is left zero.
func (a Algorithm) ApplyInto(d *Decision, s *State, l *Limit, cost, now int64) error {
	p := l.prepared()
	if p == nil || !validArgs(a, cost, now) {
		return a.applySlow(d, s, l, cost, now)
	}
	a.applyPrepared(d, s, l, p, cost, now)
	return nil
}

func (a Algorithm) applyPrepared(d *Decision, s *State, l *Limit, p *params, cost, now int64) {
	switch a {
	case GCRA, TokenBucket, LeakyBucket:
		meterInto(d, s, p, cost, now, true, a == LeakyBucket)
	default:
		*d = a.decide(s, p, cost, now, true)
	}
	d.Limit, d.Index = *l, 0
}

// applySlow is ApplyInto for a limit NewLimiter did not prepare, or a request
// that fails its checks.
func (a Algorithm) applySlow(d *Decision, s *State, l *Limit, cost, now int64) error {
	var buf params
	p, err := check(a, l, cost, now, &buf)
	if err != nil {
		*d = Decision{}
		return err
	}
	a.applyPrepared(d, s, l, p, cost, now)
	return nil
}

// ApplyAll decides one request against several limits at once, each with its
// own state (states[i] belongs to limits[i]). The request is admitted only if
// every limit admits it, and a denied request changes none of the states. The
// decision's Limit and Index name the governing limit: the denying one with the
// longest RetryAfter, or, when all admit, the one with the least remaining.
func (a Algorithm) ApplyAll(states []State, limits []Limit, cost, now int64) (Decision, error) {
	if len(states) != len(limits) || len(limits) == 0 {
		return Decision{}, fmt.Errorf("%w: %d states for %d limits", ErrInvalidLimit, len(states), len(limits))
	}
	if len(limits) == 1 {
		return a.ApplyMicros(&states[0], limits[0], cost, now)
	}
	var bufs [8]params
	var ptrs [8]*params
	pp := ptrs[:0]
	if len(limits) > len(ptrs) {
		pp = make([]*params, 0, len(limits))
	}
	for i := range limits {
		var buf *params
		if i < len(bufs) {
			buf = &bufs[i]
		} else {
			buf = new(params)
		}
		p, err := check(a, &limits[i], cost, now, buf)
		if err != nil {
			return Decision{}, err
		}
		pp = append(pp, p)
	}
	var best Decision
	allowed := true
	for i := range limits {
		d := a.decide(&states[i], pp[i], cost, now, false)
		d.Limit, d.Index = limits[i], i
		if i == 0 || governs(d, best) {
			best = d
		}
		allowed = allowed && d.Allowed
	}
	if !allowed {
		return best, nil
	}
	var delay time.Duration
	for i := range limits {
		d := a.decide(&states[i], pp[i], cost, now, true)
		d.Limit, d.Index = limits[i], i
		if i == 0 || governs(d, best) {
			best = d
		}
		delay = max(delay, d.Delay)
	}
	// An admitted request waits for its slot under every limit: the longest
	// Delay, whichever limit governs.
	best.Delay = delay
	return best, nil
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

// FreshAt returns the instant (µs since the epoch) from which s is
// indistinguishable from a fresh State under l, so a store may drop it; 0 for a
// fresh State.
func (a Algorithm) FreshAt(s *State, l Limit) int64 {
	p := l.periodMicros()
	switch a {
	case FixedWindow:
		if s.N == 0 {
			return 0
		}
		return s.T + p
	case SlidingWindow:
		if s.N == 0 && s.P == 0 {
			return 0
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
