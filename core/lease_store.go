package core

import (
	"fmt"
	"time"
)

// What a TokenLeaser needs: the grant decided on a key's states with core's
// algorithms (DecideGrant, for a store that decides in Go), or a grant
// decided elsewhere checked against them (CheckGrant, for the Lua scripts).

// CheckLease reports why r cannot be a lease of up to want tokens for ttl
// (wrapping ErrInvalidCost or ErrInvalidOption), or nil: r's Cost must be at
// least 1 and at most want, its algorithm and limits leasable (see
// TokenLease), with no penalty box, charge or debt, and ttl above 0 and at
// most the shortest Period.
func (r *TakeRequest) CheckLease(want int64, ttl time.Duration) error {
	if r.Cost < 1 || want < r.Cost {
		return fmt.Errorf("%w: a lease of %d to %d tokens", ErrInvalidCost, r.Cost, want)
	}
	if r.BlockFor != 0 || r.Charge || r.MaxDebt != 0 {
		return fmt.Errorf("%w: a lease with a penalty box, a charge or a debt", ErrInvalidOption)
	}
	if len(r.Limits) == 0 {
		return fmt.Errorf("%w: no limits", ErrInvalidLimit)
	}
	for _, lim := range r.Limits {
		if err := lim.Validate(); err != nil {
			return err
		}
	}
	return ValidateTokenLease(TokenLease{Max: 1, TTL: ttl}, r.Algorithm, r.Limits)
}

// DecideGrant decides the lease r (see CheckLease) over states at now (µs
// since the epoch) as TokenLeaser.LeaseTokens says: it spends into states
// and grants the most k from r.Cost to want that every limit admits, or
// grants 0 and decides r's denial, leaving states as a denied Take would.
func (r *TakeRequest) DecideGrant(states []State, want int64, ttl time.Duration, now int64) (TokenGrant, error) {
	if err := r.CheckLease(want, ttl); err != nil {
		return TokenGrant{}, err
	}
	if len(states) != len(r.Limits) {
		return TokenGrant{}, fmt.Errorf("%w: %d states for %d limits", ErrInvalidLimit, len(states), len(r.Limits))
	}
	peek, err := r.Algorithm.ApplyAll(states, r.Limits, 0, now)
	if err != nil {
		return TokenGrant{}, err
	}
	// The governing limit's Remaining is the least of any limit's; the
	// sliding window's estimate is a float, so step down past its rounding.
	for k := min(want, peek.Remaining); k >= r.Cost; k-- {
		trial := make([]State, len(states))
		copy(trial, states)
		d, err := r.Algorithm.ApplyAll(trial, r.Limits, k, now)
		if err != nil {
			return TokenGrant{}, err
		}
		if d.Allowed {
			copy(states, trial)
			return TokenGrant{Granted: k, Decision: d, TTL: r.grantLife(ttl, now)}, nil
		}
	}
	d, err := r.Algorithm.ApplyAll(states, r.Limits, r.Cost, now)
	if err != nil || !d.Allowed {
		return TokenGrant{Decision: d}, err
	}
	return TokenGrant{Granted: r.Cost, Decision: d, TTL: r.grantLife(ttl, now)}, nil
}

// CheckGrant checks a grant of granted tokens decided elsewhere (a script)
// on states, the key's states before it, at now (µs), and returns the
// TokenGrant core decides of it: granted must be 0 or from r.Cost to want,
// and the limits must admit it (or, for 0, deny r.Cost); otherwise the
// error wraps ErrTokenGrant and nothing of it may be spent.
func (r *TakeRequest) CheckGrant(states []State, granted, want int64, ttl time.Duration, now int64) (TokenGrant, error) {
	if err := r.CheckLease(want, ttl); err != nil {
		return TokenGrant{}, err
	}
	if granted < 0 || granted > want || (granted > 0 && granted < r.Cost) {
		return TokenGrant{}, fmt.Errorf("%w: %d tokens granted, %d to %d asked for", ErrTokenGrant, granted, r.Cost, want)
	}
	cost := max(granted, r.Cost)
	d, err := r.Algorithm.ApplyAll(states, r.Limits, cost, now)
	if err != nil {
		return TokenGrant{}, err
	}
	if d.Allowed != (granted > 0) {
		return TokenGrant{}, fmt.Errorf("%w: %d tokens granted where the limits say %v for %d", ErrTokenGrant, granted, d.Allowed, cost)
	}
	if granted == 0 {
		return TokenGrant{Decision: d}, nil
	}
	return TokenGrant{Granted: granted, Decision: d, TTL: r.grantLife(ttl, now)}, nil
}

// grantLife is how long after now tokens granted at now may be spent: ttl,
// or for the windows until the first of the current windows ends, if sooner.
func (r *TakeRequest) grantLife(ttl time.Duration, now int64) time.Duration {
	if r.Algorithm != FixedWindow && r.Algorithm != SlidingWindow {
		return ttl
	}
	life := ttl
	for _, lim := range r.Limits {
		period := lim.Period.Microseconds()
		life = min(life, micros(period-now%period))
	}
	return life
}
