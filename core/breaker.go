package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// ErrBreakerOpen is returned by a Limiter whose circuit breaker is open: its
// store failed BreakerConfig.Failures times in a row, and the limiter does
// not ask it again until the open interval ends. The Decision returned with
// it carries in RetryAfter the time left until the next probe; nothing was
// spent. The HTTP layer answers it as it does a store failure (fail open or
// closed), at once instead of after the store timeout.
var ErrBreakerOpen = errors.New("ratewarden: store circuit breaker open")

// BreakerState is the state of a Limiter's circuit breaker on its store.
// Its String form is a fixed, lower-case word.
type BreakerState uint8

// The states of a breaker. The zero BreakerState is none of them.
const (
	// BreakerClosed: every decision asks the store (the state of a limiter
	// whose breaker is off, too).
	BreakerClosed BreakerState = iota + 1
	// BreakerOpen: the store failed repeatedly; decisions return
	// ErrBreakerOpen at once, without asking it.
	BreakerOpen
	// BreakerHalfOpen: the open interval ended and one call, the probe, is
	// asking the store; the others still return ErrBreakerOpen. A probe that
	// succeeds closes the breaker; one that fails opens it for longer.
	BreakerHalfOpen
)

// String returns "closed", "open", "half_open", or "unknown".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half_open"
	}
	return "unknown"
}

// BreakerConfig sets a Limiter's circuit breaker (WithBreaker). Start from
// DefaultBreaker and change what differs.
type BreakerConfig struct {
	// Failures is how many store calls in a row must fail (an error, a
	// timeout) for the breaker to open: at least 1. A success starts the
	// count again.
	Failures int
	// MinOpen is how long the breaker stays open the first time, before one
	// call probes the store: above 0.
	MinOpen time.Duration
	// MaxOpen caps the open interval, which doubles after every failed
	// probe: at least MinOpen. After the store recovers, the limiter decides
	// exactly again within one open interval, MaxOpen at most.
	MaxOpen time.Duration
	// Jitter is the fraction, in [0, 1), of each interval taken off at
	// random, so that the instances of a fleet do not probe a recovering
	// store in lockstep: with 0.2, an interval of 4 s lasts 3.2 to 4 s.
	Jitter float64
	// Rand returns the random numbers of the jitter, in [0, 1); nil uses
	// math/rand/v2. Set it where runs must repeat (tests, simulations).
	Rand func() float64
}

// DefaultBreaker returns the settings of the breaker every Limiter has
// unless WithBreaker or WithoutBreaker says otherwise: open after 5 failures
// in a row, for 1 s, doubling after each failed probe up to 10 s, with 20%
// jitter.
//
// They are conservative: five failures in a row never come from one lost
// reply or one slow call, so a healthy store never trips it; a first open
// interval of a second lets at most a second of requests pass unlimited (fail
// open) or get 503 (fail closed) after a short outage; the 10 s cap keeps
// the limiter's exactness back within 10 s of the store's recovery, while a
// long outage costs one probe (one request waiting for the store timeout)
// per interval.
func DefaultBreaker() BreakerConfig {
	return BreakerConfig{Failures: 5, MinOpen: time.Second, MaxOpen: 10 * time.Second, Jitter: 0.2}
}

// validate checks c for WithBreaker.
func (c BreakerConfig) validate() error {
	switch {
	case c.Failures < 1:
		return fmt.Errorf("%w: breaker Failures %d, want at least 1", ErrInvalidOption, c.Failures)
	case c.MinOpen <= 0:
		return fmt.Errorf("%w: breaker MinOpen %s, want above 0", ErrInvalidOption, c.MinOpen)
	case c.MaxOpen < c.MinOpen:
		return fmt.Errorf("%w: breaker MaxOpen %s is below MinOpen %s", ErrInvalidOption, c.MaxOpen, c.MinOpen)
	case !(c.Jitter >= 0 && c.Jitter < 1): // also refuses NaN
		return fmt.Errorf("%w: breaker Jitter %v, want a fraction in [0, 1)", ErrInvalidOption, c.Jitter)
	}
	return nil
}

// WithBreaker sets the limiter's circuit breaker on its store (every
// limiter has DefaultBreaker's unless told otherwise): after c.Failures
// failed store calls in a row, AllowN and Refund return ErrBreakerOpen at
// once, without asking the store, for an interval that starts at c.MinOpen
// and doubles after every failed probe up to c.MaxOpen, less a random
// c.Jitter fraction. When an interval ends, one call probes the store (the
// others keep getting ErrBreakerOpen): a success closes the breaker. Errors
// that say nothing of the store's health never count: an invalid cost or
// time, a full store's refusal (ErrStoreFull), or a call whose context the
// caller canceled. A context deadline does count, as a timeout.
//
// Time is the limiter's clock (WithClock). Tiers (Limiter.Tier) share
// their limiter's breaker, as they share its store. It returns an error
// wrapping ErrInvalidOption for settings out of range (see BreakerConfig).
func WithBreaker(c BreakerConfig) Option {
	return func(l *Limiter) error {
		if err := c.validate(); err != nil {
			return err
		}
		l.breaker = &breaker{cfg: c}
		return nil
	}
}

// WithoutBreaker turns the limiter's circuit breaker off: every decision
// asks the store, however often it fails, and pays the store timeout while
// it does not answer.
func WithoutBreaker() Option {
	return func(l *Limiter) error {
		l.breaker = nil
		return nil
	}
}

// BreakerState returns the state of the limiter's circuit breaker:
// BreakerClosed when it is off.
func (l *Limiter) BreakerState() BreakerState {
	if l.breaker == nil {
		return BreakerClosed
	}
	return l.breaker.state()
}

// breaker is a Limiter's circuit breaker. Closed, it costs a decision two
// atomic loads. It is safe for concurrent use.
type breaker struct {
	cfg BreakerConfig
	// openUntil is the instant (Unix ns on the limiter's clock) until which
	// the store is not asked; 0 while closed. A probe moves it one interval
	// on, so a probe that never returns frees the next one then.
	openUntil atomic.Int64
	failures  atomic.Int32 // failed calls in a row while closed
	opens     atomic.Int32 // intervals in a row without a success: the doubling count
	probing   atomic.Bool  // a probe's call is under way
}

func (b *breaker) state() BreakerState {
	switch {
	case b.openUntil.Load() == 0:
		return BreakerClosed
	case b.probing.Load():
		return BreakerHalfOpen
	}
	return BreakerOpen
}

// closed reports whether b lets every call through without asking enter
// (nil: the limiter has no breaker). Inlined on the decision's path.
func (b *breaker) closed() bool { return b == nil || b.openUntil.Load() == 0 }

// enter decides, for a call at now (Unix ns) finding the breaker open,
// whether it may ask the store, and whether it is then the probe; when it
// may not, wait is the time until the next probe.
func (b *breaker) enter(now int64) (ask, probe bool, wait time.Duration) {
	for {
		until := b.openUntil.Load()
		switch {
		case until == 0:
			return true, false, 0
		case now < until:
			return false, false, time.Duration(until - now)
		}
		if b.openUntil.CompareAndSwap(until, after(now, b.span(b.opens.Load()))) {
			b.probing.Store(true)
			return true, true, 0
		}
	}
}

// record counts the outcome of a store call made at or before now (Unix
// ns): err nil for a success. ctx is the call's context.
func (b *breaker) record(ctx context.Context, err error, probe bool, now int64) {
	if err == nil {
		if probe || b.openUntil.Load() != 0 {
			b.openUntil.Store(0)
			b.opens.Store(0)
			b.probing.Store(false)
		}
		if b.failures.Load() != 0 {
			b.failures.Store(0)
		}
		return
	}
	switch {
	case !storeFailure(ctx, err):
		if probe { // it told nothing: the next call probes again
			b.openUntil.Store(max(now, 1))
			b.probing.Store(false)
		}
	case probe:
		b.openUntil.Store(after(now, b.span(b.opens.Add(1))))
		b.probing.Store(false)
	case b.openUntil.Load() == 0 && int(b.failures.Add(1)) >= b.cfg.Failures:
		if b.openUntil.CompareAndSwap(0, after(now, b.span(1))) {
			b.opens.Store(1)
			b.failures.Store(0)
		}
	}
}

// ErrStoreTimeout is the cause (context.Cause) of a context whose deadline
// is the bound on one store call, as WithStoreTimeout makes it: when that
// deadline runs out the store was too slow, which the circuit breaker
// counts. Any other deadline that runs out is the caller giving up (a gRPC
// client's grpc-timeout, a request's own deadline), which, like a cancel,
// says nothing of the store: counting it would let a client that sends
// short deadlines open the breaker for everyone.
var ErrStoreTimeout = errors.New("ratewarden: the store call outlasted its timeout")

// WithStoreTimeout returns ctx bounded by d for one store call, whose
// running out the circuit breaker counts as the store's failure (see
// ErrStoreTimeout). httplimit bounds every store call with it
// (httplimit.WithStoreTimeout).
func WithStoreTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(d)
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, ErrStoreTimeout)
	return context.WithValue(ctx, storeDeadline{}, deadline), cancel
}

// storeDeadline is the context key of the deadline WithStoreTimeout set.
type storeDeadline struct{}

// deadlineSlack is how close to a context's deadline a store error counts
// as the deadline's doing: a client's socket deadline (go-redis sets the
// context's) may fire a little before the context is marked done.
const deadlineSlack = time.Millisecond

// storeFailure reports whether err, returned by a store call on ctx, says
// the store is failing: not a refusal of the request itself, and not the
// caller giving up (a cancel, or a deadline that is not the store call's
// own, WithStoreTimeout's).
func storeFailure(ctx context.Context, err error) bool {
	switch {
	case errors.Is(err, ErrStoreFull), errors.Is(err, ErrInvalidCost), errors.Is(err, ErrInvalidLimit),
		errors.Is(err, ErrInvalidAlgorithm), errors.Is(err, ErrClock), errors.Is(err, ErrUnsupported):
		return false
	case ctx.Err() != nil:
		return errors.Is(context.Cause(ctx), ErrStoreTimeout)
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < deadlineSlack {
		own, _ := ctx.Value(storeDeadline{}).(time.Time)
		return own.Equal(deadline) // the store call's own bound ran out, not the caller's
	}
	return true
}

// span returns the open interval after n intervals in a row (n >= 1):
// MinOpen doubled n-1 times, at most MaxOpen, less the jitter.
func (b *breaker) span(n int32) time.Duration {
	d := b.cfg.MaxOpen
	if n < 1 {
		n = 1
	}
	if n <= 62 && b.cfg.MinOpen <= b.cfg.MaxOpen>>(n-1) {
		d = b.cfg.MinOpen << (n - 1)
	}
	if b.cfg.Jitter > 0 {
		r := b.random()
		d -= time.Duration(float64(d) * b.cfg.Jitter * r)
	}
	return max(d, 1)
}

// random returns a number in [0, 1) from the configured source.
func (b *breaker) random() float64 {
	if b.cfg.Rand == nil {
		return rand.Float64()
	}
	r := b.cfg.Rand()
	if !(r >= 0 && r < 1) { // a source out of range, or NaN: no jitter
		return 0
	}
	return r
}

// after returns now + d in Unix ns, saturating, never 0 (0 means closed).
func after(now int64, d time.Duration) int64 {
	if now > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return max(now+int64(d), 1)
}

// takeAfter makes req, a store call that follows a decision (a refund, a
// settle), through l's breaker: it never probes (the requests do), so
// while the breaker is open it changes nothing and returns ErrBreakerOpen
// with the time until the next probe; its outcome counts as the requests'
// do.
func (l *Limiter) takeAfter(ctx context.Context, req TakeRequest, now time.Time) (Decision, error) {
	if b := l.breaker; b != nil {
		if until := b.openUntil.Load(); until != 0 {
			return Decision{RetryAfter: max(time.Duration(until-now.UnixNano()), 0)}, ErrBreakerOpen
		}
	}
	d, err := l.store.Take(ctx, req)
	if l.breaker != nil && (err != nil || l.breaker.failures.Load() != 0) {
		l.record(ctx, err, false, now)
	}
	return d, err
}
