package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TokenLease lets a Limiter take tokens of a hot key from its store in
// batches and spend them locally, so that a key asked for many times a
// second costs its store one call per batch instead of one per decision.
// (A token lease is unrelated to an in-flight slot's lease, InFlight.Lease.)
//
// A key starts cold: each decision is one store call, exactly as without a
// lease. As the key's local rate grows, the Limiter asks the store for L
// tokens in one atomic call (the store grants k <= L, never more than the
// limits allow, and counts them as spent), then admits the key's requests
// from the k tokens with no store call; L doubles per call up to Max while
// the key stays hot, so that a lease lasts about TTL/2. For the windows it
// drops back to 1 (one exact store call per decision) once the store's
// remaining quota is at most Fleet x Max; a meter's quota refills as it
// goes, so a meter's lease keeps its size near the limit and, once denied,
// waits until that many tokens are back (at most TTL) before asking again.
// A store's denial is repeated locally while its RetryAfter runs, at most
// TTL. A refresh is started in the background before a lease runs out (at
// half its size, at 3/4 of its TTL, or once what it holds would be spent in
// less than twice the lease calls' observed latency), and a request that
// finds tokens never waits for it. A request that finds its key's lease
// empty while a lease call is on its way is denied at once when the key's
// last lease call was granted fewer tokens than it asked (the key is at its
// limit: RetryAfter is the time its governing limit takes to give a token
// back, a fixed window's end), and otherwise waits at most a millisecond
// for the call (not at all when the calls' latency says it will not be back
// by then) before asking the store itself.
//
// Leased tokens are spent only while their lease lasts: for the fixed and
// sliding windows, until the end of the window they were counted in (or TTL,
// if sooner); for GCRA and the token bucket, TTL. Hence the bound, on every
// instance sharing the store together:
//
//   - windows admit at most each limit's Rate per window, always (every
//     leased token was counted in the window it is spent in);
//   - the meters admit at most Burst + Rate x (T + TTL) / Period in any
//     interval T (a token is spent at most TTL after the store counted it);
//   - false denials (a client refused while tokens sit unspent in other
//     instances' leases) are at most instances x Max per window or TTL; a
//     crashed instance's lease is lost, costing at most its L tokens once.
//     A request denied at its key's limit while a lease call is on its way
//     could have had only the tokens that call brings (the store can have
//     regained no more since it last granted fewer than asked), at most
//     Max, and the key's next requests spend them: the fleet admits no
//     fewer for it.
//
// The sliding log (each admission is a timestamp the log must hold when it
// happens) and the leaky bucket (each admission is a place in a queue) cannot
// be leased exactly and are refused, as are calendar limits, a penalty box
// (WithBlockFor) and a debt bound (WithDebt), whose decisions need the store
// every time.
type TokenLease struct {
	// Max is L_max, the most tokens one lease holds: from 1 to the smallest
	// Rate (and Burst) of the limiter's limits. Larger saves more store
	// calls on a hot key and strands more tokens in leases (false denials,
	// at most instances x Max).
	Max int64
	// TTL is tau, the longest a leased token may be spent after the store
	// counted it: more than 0 and at most the shortest Period. For the
	// meters it is the term of the bound; with the store down, held tokens
	// are spent for at most TTL, and leasing resumes within TTL of recovery.
	TTL time.Duration
	// Fleet estimates how many instances share the store's keys: a
	// window's leases shrink to 1 token once the store's remaining quota is
	// at most Fleet x Max, so that the last tokens are decided one by one. 0 means
	// 1. An estimate too low costs false denials near the limit, never an
	// admission beyond the bound.
	Fleet int
	// Keys bounds the local table of leases (the hot keys one Limiter
	// tracks): 0 means DefaultTokenLeaseKeys; at most MaxTokenLeaseKeys. A
	// key pushed out gives its unspent tokens back.
	Keys int
}

const (
	// DefaultTokenLeaseKeys is the size of a Limiter's table of token leases
	// when TokenLease.Keys is 0: hot keys are few, and each entry costs about
	// 200 bytes (a table of 1024, about 200 KB per limiter and tier).
	DefaultTokenLeaseKeys = 1024
	// MaxTokenLeaseKeys is the largest table of token leases.
	MaxTokenLeaseKeys = 1 << 20
)

// ErrTokenGrant reports a store's grant of leased tokens that breaks the
// TokenLeaser contract (more than asked for, fewer than the request's cost,
// a lease of no or too long a life): the Limiter refuses to spend any of it.
var ErrTokenGrant = errors.New("ratewarden: store granted tokens outside the lease's terms")

// TokenLeaser is implemented by stores that can lease a key's tokens to a
// Limiter (WithTokenLease) in one atomic call; it is found by type
// assertion, like Resetter. Unused tokens go back as an ordinary refund (a
// Take of negative Cost admitted when they were granted).
type TokenLeaser interface {
	// LeaseTokens decides req as Take would for a cost between req.Cost
	// (at least 1) and want: it spends and grants the most k in that range
	// that every limit admits, or, when not even req.Cost fits, grants 0 and
	// returns req's denial. TTL bounds the grant's life (see TokenGrant.TTL).
	LeaseTokens(ctx context.Context, req TakeRequest, want int64, ttl time.Duration) (TokenGrant, error)
}

// TokenGrant is a TokenLeaser's answer.
type TokenGrant struct {
	// Granted is the number of tokens spent for the lease: 0 (denied) or
	// from the request's Cost to want.
	Granted int64
	// Decision is the decision of spending Granted (Remaining counts what is
	// left after the whole grant), or the request's denial.
	Decision Decision
	// TTL is how long after the store decided the granted tokens may be
	// spent: the ttl asked for, or, for the windows, until the end of the
	// first of the current windows to end, if sooner. 0 when denied.
	TTL time.Duration
}

// WithTokenLease makes the limiter lease tokens of its hot keys from its
// store (see TokenLease), which must be a TokenLeaser. NewLimiter returns an
// error wrapping ErrInvalidOption for a Max or TTL out of range, an
// algorithm or limit that cannot be leased exactly, or a store that leases
// nothing.
func WithTokenLease(t TokenLease) Option {
	return func(l *Limiter) error {
		if t.Max <= 0 {
			return fmt.Errorf("%w: token lease of %d tokens, want at least 1", ErrInvalidOption, t.Max)
		}
		if t.TTL <= 0 {
			return fmt.Errorf("%w: token lease TTL %s, want more than 0", ErrInvalidOption, t.TTL)
		}
		if t.Fleet < 0 || t.Keys < 0 || t.Keys > MaxTokenLeaseKeys {
			return fmt.Errorf("%w: token lease fleet %d, keys %d (want 0 to %d)", ErrInvalidOption, t.Fleet, t.Keys, MaxTokenLeaseKeys)
		}
		l.lease = &leaseState{cfg: t}
		return nil
	}
}

// TokenLease returns the limiter's token lease (WithTokenLease), or the
// zero TokenLease when it leases nothing.
func (l *Limiter) TokenLease() TokenLease {
	if l.lease == nil {
		return TokenLease{}
	}
	return l.lease.cfg
}

// checkTokenLease checks l's token lease against its algorithm, limits and
// store, once every option is applied, and builds its table.
func (l *Limiter) checkTokenLease() error {
	s := l.lease
	if s == nil {
		return nil
	}
	if err := ValidateTokenLease(s.cfg, l.alg, l.limits); err != nil {
		return err
	}
	switch {
	case l.blockFor != 0:
		return fmt.Errorf("%w: a token lease cannot be used with a penalty box (WithBlockFor)", ErrInvalidOption)
	case l.debt != 0:
		return fmt.Errorf("%w: a token lease cannot be used with a debt bound (WithDebt)", ErrInvalidOption)
	}
	leaser, ok := l.store.(TokenLeaser)
	if !ok {
		return fmt.Errorf("%w: token lease: %T leases no tokens (store/luascript's stores do)", ErrInvalidOption, l.store)
	}
	s.init(leaser, l.alg)
	return nil
}

// ValidateTokenLease reports why t cannot lease the tokens of alg under
// limits (with their defaults filled in, as a Limiter holds them), wrapping
// ErrInvalidOption, or nil.
func ValidateTokenLease(t TokenLease, alg Algorithm, limits []Limit) error {
	switch alg {
	case SlidingLog:
		return fmt.Errorf("%w: the sliding log cannot be leased exactly (each admission is a timestamp the log holds when it happens); use the sliding window", ErrInvalidOption)
	case LeakyBucket:
		return fmt.Errorf("%w: the leaky bucket cannot be leased exactly (each admission is a place in its queue); use GCRA", ErrInvalidOption)
	}
	if t.Max <= 0 || t.TTL <= 0 {
		return fmt.Errorf("%w: token lease of %d tokens for %s, want both above 0", ErrInvalidOption, t.Max, t.TTL)
	}
	for _, lim := range limits {
		if lim.Calendar != 0 {
			return fmt.Errorf("%w: a calendar limit (%s) cannot be leased", ErrInvalidOption, lim)
		}
		if t.Max > lim.Rate || t.Max > lim.EffectiveBurst() {
			return fmt.Errorf("%w: token lease of %d tokens is above the limit %s", ErrInvalidOption, t.Max, lim)
		}
		if t.TTL > lim.Period {
			return fmt.Errorf("%w: token lease TTL %s is longer than the window of %s", ErrInvalidOption, t.TTL, lim)
		}
	}
	return nil
}
