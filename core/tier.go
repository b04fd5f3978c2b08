package core

import (
	"context"
	"fmt"
	"time"
)

// maxNameLen bounds a limit set's name, which goes into every response's
// RateLimit-Policy header.
const maxNameLen = 64

// Tier returns a limiter that shares l's store, clock, algorithm and namespace
// but applies limit (and more) instead of l's limits: the limits of one call,
// as chosen per request (a free and a paid plan), computed once here. The
// limit set is named name: an unnamed first limit takes name, an unnamed
// further one name, a space and the limit ("paid 1000/h").
//
// Tier returns an error wrapping ErrInvalidLimit for a name that is empty,
// longer than 64 bytes, or holds anything but printable ASCII other than '"'
// and '\', and the errors NewLimiter returns for the limits (at most 8).
//
// A key's state is kept per algorithm and limit figures (rate, period and
// burst, not names), so tiers with different figures never share counts. Two
// tiers with the same figures are the same quota and share a key's state: a
// key moving between them carries its count, as a rules reload keeps the
// counts of limits that did not change. To keep them apart, give them
// limiters with different namespaces (WithNamespace).
func (l *Limiter) Tier(name string, limit Limit, more ...Limit) (*Limiter, error) {
	if err := validateName(name); err != nil {
		return nil, err
	}
	t := &Limiter{alg: l.alg, store: l.store, clock: l.clock, sys: l.sys, ns: l.ns}
	limits := append(append(make([]Limit, 0, 1+len(more)), limit), more...)
	err := t.setLimits(limits, name, func(lim Limit) string { return name + " " + lim.String() })
	if err != nil {
		return nil, fmt.Errorf("tier %q: %w", name, err)
	}
	t.name = name
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

// Reset forgets key's state under the limiter's algorithm and limits, key
// being exactly what was given to AllowN (for the HTTP layer, what the key
// function produced). Resetting a key the store does not hold is not an error.
// It returns an error wrapping ErrUnsupported when the store is not a
// Resetter, and the store's error when it could not reset.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	r, ok := l.store.(Resetter)
	if !ok {
		return fmt.Errorf("%w: %T cannot reset a key", ErrUnsupported, l.store)
	}
	return r.Reset(ctx, l.request(key, 0, l.clock.Now()))
}

// request is the TakeRequest for key, cost and now under l's limits.
func (l *Limiter) request(key string, cost int64, now time.Time) TakeRequest {
	return TakeRequest{Key: key, Namespace: l.ns, Algorithm: l.alg, Limits: l.limits, Cost: cost, Now: now, plan: &l.plan}
}

// Refund gives back n of the cost that admitted, a Decision AllowN returned
// for key on this limiter, spent, in one atomic store call, and returns key's
// decision after it (as Peek would). It is for counting only what should
// count, such as failed logins: spend on arrival, refund on success.
//
// A refund never raises the key above a fresh key's quota, and never gives
// back more than admitted spent (n is clamped; a Decision not made by a
// Limiter, such as the zero Decision, is taken as admitted now, with n
// clamped only by the fresh quota). Once the admission's window has ended (the
// windows) or the meter has refilled past it (the buckets and GCRA), there is
// nothing left to give back and the refund changes nothing; each algorithm's
// rule is in Algorithm's doc. Under several limits the cost is given back
// under each.
//
// Refund returns an error wrapping ErrInvalidCost for n <= 0 or a denied
// admitted (nothing was spent), and the store's error when it could not
// decide.
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
	d, err := l.store.Take(ctx, req)
	if err == nil {
		d.at = Micros(now)
	}
	return d, err
}
