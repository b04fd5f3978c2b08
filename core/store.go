package core

import (
	"context"
	"time"
)

// Store applies an algorithm to a key's state atomically: it reads, decides
// and writes in one step, so concurrent requests (from one process or, for a
// shared store, from many) never both spend the same quota. A Store never
// does get-then-set across a network.
//
// Implementations must decide exactly as [Algorithm.ApplyAll] does for the
// same sequence of requests and times (package store/storetest checks this).
// Optional extras (io.Closer, [Resetter]) are found by type assertion.
type Store interface {
	// Take decides req and, when it is admitted, spends its cost under every
	// limit. Being limited is a Decision; an error means the store could not
	// decide (it is down, slow, or the request is invalid).
	Take(ctx context.Context, req TakeRequest) (Decision, error)
}

// TakeRequest is what a Limiter asks of its Store.
type TakeRequest struct {
	// Key identifies the client (an IP, an API key, a user).
	Key string
	// Namespace separates limiters that share one store; a store keys its state
	// by (Namespace, Key, Algorithm, Limits).
	Namespace string
	// Algorithm is the algorithm to apply.
	Algorithm Algorithm
	// Limits are the limits that must all admit the request (at least one).
	Limits []Limit
	// Cost is what the request spends; 0 is a peek.
	Cost int64
	// Now is the caller's time. A store that keeps its own time (Redis's TIME)
	// may ignore it.
	Now time.Time
}

// Resetter is implemented by stores that can forget a key, e.g. after a
// successful login resets a failed-attempts limit.
type Resetter interface {
	Reset(ctx context.Context, req TakeRequest) error
}

// Fingerprint hashes the request's algorithm and limits (their Rate, Period
// and effective Burst; not their Names): requests whose states a store must
// keep apart have different fingerprints, except with negligible probability.
// It is stable within a process, not across processes or versions. Limits
// prepared by a Limiter carry their part precomputed, so this costs a few
// instructions on the hot path.
func (r *TakeRequest) Fingerprint() uint64 {
	f := uint64(r.Algorithm+1) * 0x9e3779b97f4a7c15
	for i := range r.Limits {
		l := &r.Limits[i]
		var lf uint64
		if c := l.prep; c != nil && c.fromRate == l.Rate && c.fromPeriod == l.Period && c.fromBurst == l.Burst {
			lf = c.fp
		} else {
			lf = limitFingerprint(*l)
		}
		if i == 0 {
			f ^= lf
		} else {
			f = mix64(f) ^ lf
		}
	}
	return f
}

// limitFingerprint hashes a limit's Rate, Period and effective Burst.
func limitFingerprint(l Limit) uint64 {
	f := uint64(l.Rate)
	f = f*0x100000001b3 ^ uint64(l.Period)
	f = f*0x100000001b3 ^ uint64(l.EffectiveBurst())
	return mix64(f)
}

// mix64 is the splitmix64 finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
