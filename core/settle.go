package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Settling: a request reserves an estimate when it is admitted (AllowN with
// the estimate) and, once its real cost is known (the tokens an LLM answer
// generated, the bytes an export sent), settles it with Limiter.Settle. The
// difference is one atomic store call:
//
//   - a real cost below the estimate gives the difference back, as a refund
//     does (refund.go: never above a fresh key's quota);
//   - a real cost above it is a charge (TakeRequest.Charge): spent whether or
//     not it fits, up to the limiter's debt bound (WithDebt) beyond an empty
//     quota; what goes beyond the bound is forgiven. A key in debt is denied
//     until the debt is paid back, and its RetryAfter says when.
//
// What debt means per algorithm, with D the bound:
//
//   - token bucket, leaky bucket, GCRA: the state instant T moves ahead by
//     the charge's emission intervals, up to now + tau + D intervals. A T that
//     far ahead is not read as a clock that stepped back (see rebase) for a
//     limiter with that bound. The debt is paid back at the meter's rate: a
//     key owing k is denied for k intervals, then refills as usual.
//   - fixed window: the window's count rises above Rate, up to Rate + D; the
//     key is denied until the window ends, when the count, debt and all,
//     expires (a window's debt is owed only in its window).
//   - sliding window: the current count rises above Rate, up to Rate + D; as
//     every count, it weighs on the next window as the previous count, so the
//     debt delays requests for up to two windows, then expires.
//   - sliding log: it records the instant of each admitted unit and holds at
//     most Rate of them, so a charge cannot be recorded exactly; a charge is
//     refused with ErrUnsupported, and so is a debt bound.
//
// D is at most the capacity of each limit (Algorithm.Capacity): a debt of
// more than one whole quota would outlive a window.

// ErrNotReserved reports a settle with no reservation to settle: a Decision
// no Limiter returned, a denied one, or one already settled.
var ErrNotReserved = errors.New("ratewarden: no reservation to settle")

// WithDebt lets a settle (Limiter.Settle) charge a key up to n beyond an
// empty quota under each limit; 0, the default, charges up to empty and
// forgives the rest. n must be from 0 to the capacity of every limit, and 0
// for the sliding log; else NewLimiter returns an error wrapping
// ErrInvalidOption.
func WithDebt(n int64) Option {
	return func(l *Limiter) error {
		if n < 0 {
			return fmt.Errorf("%w: debt bound %d is negative", ErrInvalidOption, n)
		}
		l.debt = n
		return nil
	}
}

// MaxDebt returns the limiter's debt bound (WithDebt).
func (l *Limiter) MaxDebt() int64 { return l.debt }

// checkDebt reports whether alg can hold a debt of n under every limit.
func checkDebt(alg Algorithm, limits []Limit, n int64) error {
	if n == 0 {
		return nil
	}
	if alg == SlidingLog {
		return fmt.Errorf("%w: sliding-log records each admitted unit's instant and cannot hold a debt; use sliding-window, token-bucket or gcra", ErrInvalidOption)
	}
	for _, lim := range limits {
		if c := alg.Capacity(lim); n > c {
			return fmt.Errorf("%w: debt bound %d exceeds the capacity %d of %s", ErrInvalidOption, n, c, lim)
		}
	}
	return nil
}

// setDebt records a debt bound of n in p's figures: µs beyond tau for the
// meters, counts above Rate for the windows.
func (p *plan) setDebt(n int64) {
	p.debt = n
	for i := range p.params {
		p.params[i].setDebt(p.alg, n)
	}
}

func (p *params) setDebt(alg Algorithm, n int64) {
	if alg.OneWord() {
		p.debt = min(n, p.burst) * p.interval
		return
	}
	p.debt = min(n, p.rate)
}

// horizon is how far ahead of now a meter's T may lie before it reads as a
// clock that stepped back: tau, plus the debt bound.
func (p *params) horizon() int64 { return p.tau + p.debt }

// Settle settles reserved, a Decision that AllowN returned for key on l and
// that admitted an estimated cost, at the real cost actual, in one atomic
// store call, and returns key's decision after it, as Peek would (its Debt
// tells what key owes). A real cost below the estimate gives the difference
// back (see Refund); one above it charges the difference, into a debt of at
// most MaxDebt (see WithDebt); an equal one asks the store nothing and
// returns reserved. It marks reserved settled first, so a second Settle of
// it is an error: ErrNotReserved, as for a Decision no Limiter returned or
// a denied one; a negative actual wraps ErrInvalidCost. A store failure
// leaves the estimate spent. key must be the one reserved has been decided
// for. Settle is not safe for concurrent use on one reserved.
func (l *Limiter) Settle(ctx context.Context, key string, actual int64, reserved *Decision) (Decision, error) {
	if actual < 0 {
		return Decision{}, fmt.Errorf("%w: settle at %d, want a cost of 0 or more", ErrInvalidCost, actual)
	}
	if reserved == nil || reserved.at == 0 || !reserved.Allowed || reserved.spent < 0 {
		return Decision{}, fmt.Errorf("%w: settle of a decision that reserved nothing, or was settled already", ErrNotReserved)
	}
	est := reserved.spent
	reserved.spent = -1 // settled
	if actual == est {
		d := *reserved
		return d, nil
	}
	now := l.clock.Now()
	if l.sys {
		now = SystemClock{}.Now()
	}
	req := l.request(key, 0, now)
	switch {
	case actual < est:
		req.Cost = -(est - actual)
		if at := time.UnixMicro(reserved.at); at.Before(now) {
			req.Admitted = at
		}
	default:
		if l.alg == SlidingLog {
			return Decision{}, fmt.Errorf("%w: sliding-log cannot charge a cost after admission", ErrUnsupported)
		}
		req.Cost, req.Charge = actual-est, true
	}
	d, err := l.takeAfter(ctx, req, now)
	if err == nil {
		d.at, d.spent = Micros(now), -1
	}
	return d, err
}

// settleParams checks r's debt bound and charge, and writes the figures of
// r's limits with the debt bound into bufs (no pointer into it leaves, so
// the caller's array stays on its stack); it returns how many.
func (r *TakeRequest) settleParams(bufs *[maxLimits]params, now int64) (int, error) {
	if len(r.Limits) == 0 || len(r.Limits) > maxLimits {
		return 0, fmt.Errorf("%w: %d limits", ErrInvalidLimit, len(r.Limits))
	}
	if r.MaxDebt < 0 {
		return 0, fmt.Errorf("%w: debt bound %d is negative", ErrInvalidCost, r.MaxDebt)
	}
	if err := checkDebt(r.Algorithm, r.Limits, r.MaxDebt); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidCost, err)
	}
	if r.Charge && r.Algorithm == SlidingLog {
		return 0, fmt.Errorf("%w: sliding-log cannot charge a cost after admission", ErrUnsupported)
	}
	for i := range r.Limits {
		p, err := check(r.Algorithm, &r.Limits[i], max(0, r.Cost), now, &bufs[i])
		if err != nil {
			return 0, err
		}
		p.setDebt(r.Algorithm, r.MaxDebt)
	}
	return len(r.Limits), nil
}

// decideSettle is Decide for a request with a debt bound or a charge.
func (r *TakeRequest) decideSettle(d *Decision, states []State, now int64) error {
	if len(states) != len(r.Limits) {
		return fmt.Errorf("%w: %d states for %d limits", ErrInvalidLimit, len(states), len(r.Limits))
	}
	var bufs [maxLimits]params
	n, err := r.settleParams(&bufs, now)
	if err != nil {
		return err
	}
	var ptrs [maxLimits]*params
	for i := range n {
		ptrs[i] = &bufs[i]
	}
	ps := ptrs[:n]
	cost := r.Cost
	switch {
	case cost < 0:
		n, adm := r.refunded(), r.admittedAt(now)
		for i := range ps {
			r.Algorithm.refund(&states[i], ps[i], n, adm, now)
		}
		cost = 0
	case r.Charge && cost > 0:
		for i := range ps {
			r.Algorithm.rebase(&states[i], ps[i], now)
			r.Algorithm.charge(&states[i], ps[i], cost, now)
		}
		cost = 0
	}
	r.Algorithm.applyAll(d, states, r.Limits, ps, cost, now)
	d.Debt = r.Algorithm.debtOf(&states[d.Index], ps[d.Index], now)
	return nil
}

// charge spends n (> 0) from one limit's rebased state at now whether it
// fits or not, up to the debt bound: the meters move T ahead, the windows
// count above Rate; a state already beyond the bound stays as it is.
func (a Algorithm) charge(s *State, p *params, n, now int64) {
	switch a {
	case FixedWindow, SlidingWindow:
		w := p.window(now) // a calendar's previous window is no Period back
		start := w.start
		var cur, prev int64
		switch s.T {
		case start:
			cur, prev = s.N, s.P
		case w.prev:
			prev = s.N
		}
		if a == FixedWindow {
			prev = 0
		}
		top := p.rate + p.debt
		if cur < top {
			cur += min(n, top-cur)
		}
		s.T, s.N, s.P = start, cur, prev
	default:
		tat := max(s.T, now)
		top := now + p.horizon()
		if tat >= top {
			return
		}
		if n >= (top-tat)/p.interval+1 {
			s.T = top
			return
		}
		s.T = tat + n*p.interval
	}
}

// debtOf is what s owes at now beyond an empty quota, read as the
// algorithms read it (rebased): the meters' whole intervals beyond tau
// (rounded up), the windows' current count above Rate.
func (a Algorithm) debtOf(s *State, p *params, now int64) int64 {
	switch a {
	case FixedWindow, SlidingWindow:
		if start := windowStart(p, now); viewT(s, start) != start {
			return 0
		}
		return max(0, s.N-p.rate)
	case SlidingLog:
		return 0
	default:
		// Read as rebased (see rebase): a clock that stepped back leaves the
		// debt at its bound, never more.
		over := min(s.T, now+p.horizon()) - now - p.tau
		if over <= 0 {
			return 0
		}
		return (over + p.interval - 1) / p.interval
	}
}

// chargeWord is AdvanceWord for a charge: the one-word state after it.
func (r *TakeRequest) chargeWord(t, now int64) int64 {
	var bufs [maxLimits]params
	n, err := r.settleParams(&bufs, now)
	if err != nil || r.Cost <= 0 || n != 1 || !r.Algorithm.OneWord() {
		return t
	}
	s := State{T: t}
	r.Algorithm.rebase(&s, &bufs[0], now)
	r.Algorithm.charge(&s, &bufs[0], r.Cost, now)
	return s.T
}
