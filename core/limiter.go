package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limiter applies one algorithm and one or more limits to keys, keeping state
// in a Store. It is safe for concurrent use; all its state lives in the store.
type Limiter struct {
	alg    Algorithm
	limits []Limit
	store  Store
	clock  Clock
	sys    bool // clock is SystemClock: read it without an interface call
	ns     string
	name   string // the limit set's name (see Name)
	plan   plan   // computed once from alg and limits
	// breaker stops asking a failing store for a while (see WithBreaker);
	// nil when off. Tiers share their limiter's.
	breaker *breaker
	// blockFor is the penalty box's duration (WithBlockFor); 0 when off.
	blockFor time.Duration
	// inflight holds the in-flight limit and its leases (see WithInFlight);
	// nil when there is none.
	inflight *inflightState
	// lease holds the token lease and its table (see WithTokenLease); nil
	// when there is none: the rate-only path pays one nil test.
	lease *leaseState
	// debt is the debt bound of a settle (WithDebt); 0 when none.
	debt int64
	// direct is the store's TakeMicros, nil when it has none (see
	// MicrosTaker); base is the request it is sent, less key, cost and now.
	direct MicrosTaker
	base   TakeRequest
}

// Option configures a Limiter.
type Option func(*Limiter) error

// WithClock makes the limiter read time from c instead of the system clock.
func WithClock(c Clock) Option {
	return func(l *Limiter) error {
		if c == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOption)
		}
		l.clock = c
		return nil
	}
}

// WithLimit adds a limit that must also admit every request: with
// NewLimiter(st, GCRA, PerSecond(10), WithLimit(PerHour(1000))) a request passes
// only when both allow it, and a denied request spends from neither.
func WithLimit(limit Limit) Option {
	return func(l *Limiter) error {
		l.limits = append(l.limits, limit)
		return nil
	}
}

// WithNamespace separates this limiter's keys from those of other limiters
// with the same limits sharing the store (a login and an API limiter, both
// keyed by IP).
func WithNamespace(ns string) Option {
	return func(l *Limiter) error {
		if len(ns) > 256 {
			return fmt.Errorf("%w: namespace longer than 256 bytes", ErrInvalidOption)
		}
		l.ns = ns
		return nil
	}
}

// maxLimits bounds the limits one limiter applies to a request.
const maxLimits = 8

// NewLimiter returns a limiter applying alg with limit (and any added by
// WithLimit) to keys kept in store. It returns an error for a nil store, an
// unknown algorithm, or a limit the algorithm cannot enforce.
func NewLimiter(store Store, alg Algorithm, limit Limit, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrInvalidOption)
	}
	l := &Limiter{alg: alg, limits: []Limit{limit}, store: store, clock: SystemClock{}, breaker: &breaker{cfg: DefaultBreaker()}}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o(l); err != nil {
			return nil, err
		}
	}
	_, l.sys = l.clock.(SystemClock)
	if err := l.setLimits(l.limits, "default", func(l Limit) string { return l.String() }); err != nil {
		return nil, err
	}
	if err := l.checkTokenLease(); err != nil {
		return nil, err
	}
	if err := l.checkStore(); err != nil {
		return nil, err
	}
	l.prepareDirect()
	return l, nil
}

// setLimits checks limits under l's algorithm, fills in their defaults (a
// burst of Rate; the name first for an unnamed first limit, nameOf(limit) for
// the others) and computes l's plan and name. It owns limits from then on.
func (l *Limiter) setLimits(limits []Limit, first string, nameOf func(Limit) string) error {
	if len(limits) > maxLimits {
		return fmt.Errorf("%w: %d limits, at most %d", ErrInvalidOption, len(limits), maxLimits)
	}
	for i := range limits {
		if err := l.alg.ValidateLimit(limits[i]); err != nil {
			return err
		}
		if limits[i].Burst == 0 {
			limits[i].Burst = limits[i].Rate
		}
		if limits[i].Calendar != 0 && limits[i].Period == 0 {
			limits[i].Period = limits[i].Calendar.nominal()
		}
		if limits[i].Name == "" {
			limits[i].Name = first
			if i > 0 {
				// Names go into headers: "500us", not Duration's "500µs".
				limits[i].Name = strings.ReplaceAll(nameOf(limits[i]), "µ", "u")
			}
		}
	}
	p, err := newPlan(l.alg, limits)
	if err != nil {
		return err
	}
	if err := checkDebt(l.alg, limits, l.debt); err != nil {
		return err
	}
	p.setDebt(l.debt)
	l.limits, l.plan, l.name = limits, p, limits[0].Name
	return nil
}

// Algorithm returns the limiter's algorithm.
func (l *Limiter) Algorithm() Algorithm { return l.alg }

// Limits returns a copy of the limiter's limits, the first one first.
func (l *Limiter) Limits() []Limit { return append([]Limit(nil), l.limits...) }

// Store returns the limiter's store.
func (l *Limiter) Store() Store { return l.store }

// Allow is AllowN(ctx, key, 1).
func (l *Limiter) Allow(ctx context.Context, key string) (Decision, error) {
	return l.AllowNAt(ctx, key, 1, time.Time{}) // not AllowN: one call deep, Allow inlines
}

// AllowN decides whether key may spend n now, and spends it if so. n == 0 is a
// peek; a negative n is an error. An error means the store could not decide;
// the caller chooses whether to fail open or closed. While the limiter's
// circuit breaker is open (WithBreaker), the error is ErrBreakerOpen, at
// once, and the Decision's RetryAfter is the time until the breaker probes
// the store again.
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) (Decision, error) {
	return l.AllowNAt(ctx, key, n, time.Time{})
}

// AllowNAt is AllowN for a caller that has just read time.Now (a server's
// arrival stamp): on the SystemClock it decides at arrival instead of reading
// the clock again; on any other clock, or with a zero arrival, it reads the
// clock.
func (l *Limiter) AllowNAt(ctx context.Context, key string, n int64, arrival time.Time) (d Decision, err error) {
	if n < 0 {
		return Decision{}, fmt.Errorf("%w: %d is negative", ErrInvalidCost, n)
	}
	if l.direct != nil {
		if us, ok := l.nowMicros(arrival); ok {
			ask, probe, wait := true, false, time.Duration(0)
			if !l.breaker.closed() {
				ask, probe, wait = l.breaker.enter(us * 1000)
			}
			if !ask {
				return Decision{RetryAfter: wait}, ErrBreakerOpen
			}
			d, err = l.direct.TakeMicros(ctx, &l.base, key, n, us)
			if b := l.breaker; b != nil && (err != nil || probe || b.failures.Load() != 0) {
				l.record(ctx, err, probe, time.UnixMicro(us))
			}
			if err == nil {
				d.at, d.spent = us, n
			}
			return d, err
		}
	}
	var now time.Time
	switch {
	case !l.sys:
		now = l.clock.Now()
	case arrival.IsZero():
		now = SystemClock{}.Now()
	default:
		now = systemAt(arrival)
	}
	if l.lease != nil && n > 0 {
		if d, ok := l.lease.spendOrAwait(ctx, l, key, n, now); ok {
			return d, nil
		}
	}
	ask, probe, wait := true, false, time.Duration(0)
	if !l.breaker.closed() {
		ask, probe, wait = l.breaker.enter(now.UnixNano())
	}
	if !ask {
		return Decision{RetryAfter: wait}, ErrBreakerOpen
	}
	if l.lease != nil && n > 0 {
		d, err = l.lease.call(ctx, l, key, n, now) // lease_limiter.go
	} else {
		d, err = l.store.Take(ctx, TakeRequest{
			Key: key, Namespace: l.ns, Algorithm: l.alg, Limits: l.limits, Cost: n, Now: now, plan: &l.plan,
			MaxDebt: l.debt, BlockFor: l.blockFor,
		})
	}
	if b := l.breaker; b != nil && (err != nil || probe || b.failures.Load() != 0) {
		l.record(ctx, err, probe, now)
	}
	if err == nil {
		d.at, d.spent = Micros(now), n
	}
	return
}

// record tells l's breaker how a store call that began at began ended; a
// failure is dated when it is known, after a timeout.
func (l *Limiter) record(ctx context.Context, err error, probe bool, began time.Time) {
	at := began
	if err != nil {
		at = l.clock.Now()
		if l.sys {
			at = SystemClock{}.Now()
		}
	}
	l.breaker.record(ctx, err, probe, at.UnixNano())
}

// ErrWouldExceed is returned by Wait when the request cannot be admitted
// before the context's deadline, or never (a cost above the capacity).
var ErrWouldExceed = errors.New("ratewarden: wait would exceed the deadline")

// Wait blocks until key may spend 1, then spends it; see WaitN.
func (l *Limiter) Wait(ctx context.Context, key string) (Decision, error) {
	return l.WaitN(ctx, key, 1)
}

// WaitN blocks until key may spend n and spends it (for the leaky bucket, and
// waits out its Delay), or returns ctx's error. It returns ErrWouldExceed at
// once, spending nothing, when the wait would outlast ctx's deadline or n
// exceeds the capacity. Waiting uses real timers; the clock only decides.
func (l *Limiter) WaitN(ctx context.Context, key string, n int64) (Decision, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Decision{}, err
		}
		if dl, ok := ctx.Deadline(); ok && l.alg == LeakyBucket && n > 0 {
			// An admitted request spends its slot at once and is held for its
			// Delay; a peek tells that Delay without spending.
			p, err := l.AllowN(ctx, key, 0)
			if err != nil {
				return p, err
			}
			if p.Allowed && time.Until(dl) < p.Delay {
				return p, fmt.Errorf("%w: queued for %s", ErrWouldExceed, p.Delay)
			}
		}
		d, err := l.AllowN(ctx, key, n)
		if err != nil {
			return d, err
		}
		wait := d.RetryAfter
		if d.Allowed {
			wait = d.Delay
		} else if d.Exceeds {
			return d, fmt.Errorf("%w: cost %d exceeds the capacity of %s", ErrWouldExceed, n, d.Limit)
		}
		if wait <= 0 {
			return d, nil
		}
		// The deadline is on the timers' clock, not the limiter's (which may be a
		// ManualClock or a store's server time).
		if dl, ok := ctx.Deadline(); ok && !d.Allowed && time.Until(dl) < wait {
			return d, fmt.Errorf("%w: next admission in %s", ErrWouldExceed, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return d, ctx.Err()
		case <-t.C:
		}
		if d.Allowed {
			return d, nil
		}
	}
}
