package core

import (
	"context"
	"fmt"
	"time"
)

// maxNameLen bounds a limit set's name, which goes into every response's
// RateLimit-Policy header.
const maxNameLen = 64

// Tier returns a limiter that shares l's store, clock and algorithm but
// applies limit and more (a plan picked per request), named name: an unnamed first limit takes name, an unnamed further one name and the
// limit ("paid 1000/h"). name must be 1 to 64 bytes of printable ASCII without
// '"' or '\' (else an error wraps ErrInvalidLimit); the limits are checked as
// NewLimiter checks them. A tier keeps its state apart, in the namespace of
// l followed by a NUL byte and name: tiers never share a key's counts with
// each other or with l, and a tier of the same name built again with edited
// figures (a rules reload) finds what the client used under the old ones
// (see TakeRequest.Identity).
func (l *Limiter) Tier(name string, limit Limit, more ...Limit) (*Limiter, error) {
	if err := validateName(name); err != nil {
		return nil, err
	}
	t := &Limiter{alg: l.alg, store: l.store, clock: l.clock, sys: l.sys, ns: l.ns + "\x00" + name, breaker: l.breaker, blockFor: l.blockFor, inflight: l.inflight, debt: l.debt}
	limits := append(append(make([]Limit, 0, 1+len(more)), limit), more...)
	err := t.setLimits(limits, name, func(lim Limit) string { return name + " " + lim.String() })
	if err == nil && l.lease != nil { // a tier leases on its own table
		t.lease = &leaseState{cfg: l.lease.cfg}
		err = t.checkTokenLease()
	}
	if err == nil {
		err = t.checkStore()
	}
	if err != nil {
		return nil, fmt.Errorf("tier %q: %w", name, err)
	}
	t.name = name
	t.prepareDirect()
	return t, nil
}

// validateName checks a limit set's name for Tier.
func validateName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%w: tier name must be 1 to %d bytes, got %d", ErrInvalidLimit, maxNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return fmt.Errorf("%w: tier name %q may hold only printable ASCII other than '\"' and '\\'", ErrInvalidLimit, name)
		}
	}
	return nil
}

// Name returns the name of the limiter's limit set: the name given to Tier,
// or the first limit's Name ("default" when it was unnamed).
func (l *Limiter) Name() string { return l.name }

// Peek is AllowN(ctx, key, 0): what key could spend now, changing nothing.
func (l *Limiter) Peek(ctx context.Context, key string) (Decision, error) {
	return l.AllowN(ctx, key, 0)
}

// Reset forgets key's state under l's limits, key being exactly what was
// given to AllowN. A key the store does not hold is no error; a store that is
// not a Resetter is, wrapping ErrUnsupported.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	r, ok := l.store.(Resetter)
	if !ok {
		return fmt.Errorf("%w: %T cannot reset a key", ErrUnsupported, l.store)
	}
	l.lease.forget(key) // the key's leased tokens were counted before the reset
	return r.Reset(ctx, l.request(key, 0, l.clock.Now()))
}

// request is the TakeRequest for key, cost and now under l's limits.
func (l *Limiter) request(key string, cost int64, now time.Time) TakeRequest {
	return TakeRequest{Key: key, Namespace: l.ns, Algorithm: l.alg, Limits: l.limits, Cost: cost, Now: now, plan: &l.plan, BlockFor: l.blockFor, MaxDebt: l.debt}
}

// Refund gives back n of what admitted (a Decision AllowN returned for key on
// l) spent, in one atomic store call, and returns key's decision after it, as
// Peek would: for counting only failures. It never gives back more than
// admitted spent (a Decision no Limiter made, such as the zero one, counts as
// admitted now), never raises key above a fresh key's quota, and gives back
// nothing once the admission's window has passed or its meter has refilled
// (see Algorithm). n <= 0 or a denied admitted is an error wrapping
// ErrInvalidCost; while the limiter's breaker is open it returns
// ErrBreakerOpen without asking the store.
func (l *Limiter) Refund(ctx context.Context, key string, n int64, admitted Decision) (Decision, error) {
	if n <= 0 {
		return Decision{}, fmt.Errorf("%w: refund of %d, want a positive amount", ErrInvalidCost, n)
	}
	if !admitted.Allowed && admitted != (Decision{}) {
		return Decision{}, fmt.Errorf("%w: refund of a denied decision, which spent nothing", ErrInvalidCost)
	}
	now := l.clock.Now()
	req := l.request(key, -n, now)
	if admitted.at != 0 {
		if admitted.spent == 0 { // a peek spent nothing: peek again
			return l.AllowN(ctx, key, 0)
		}
		req.Cost = -min(n, admitted.spent)
		if at := time.UnixMicro(admitted.at); at.Before(now) {
			req.Admitted = at
		}
	}
	d, err := l.takeAfter(ctx, req, now)
	if err == nil {
		d.at = Micros(now)
	}
	return d, err
}
