package core

import (
	"context"
	"time"
)

// Store applies an algorithm to a key's state atomically (read, decide and
// write in one step, never get-then-set across a network), deciding exactly as
// [Algorithm.ApplyAll] does; package testing/storetest checks it, and
// [TakeRequest.Decide] does it with the figures the Limiter computed once.
// Optional extras (io.Closer, [Resetter], [StoreChecker], [TokenLeaser],
// [InFlightStore], [MicrosTaker]) are found by type assertion.
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
	// by (Namespace, Key, Algorithm, number of Limits), not by the limits'
	// figures, and re-expresses a state written under other figures (see
	// TakeRequest.Identity and TakeRequest.Reexpress).
	Namespace string
	// Algorithm is the algorithm to apply.
	Algorithm Algorithm
	// Limits are the limits that must all admit the request (at least one).
	Limits []Limit
	// Cost is what the request spends; 0 is a peek; a negative Cost is a
	// refund of -Cost (see TakeRequest.Decide).
	Cost int64
	// Now is the caller's time. A store that keeps its own time (Redis's TIME)
	// may ignore it.
	Now time.Time
	// Admitted is a refund's admission instant, on Now's clock; zero is Now.
	Admitted time.Time
	// Charge makes a positive Cost a settle's charge (see Limiter.Settle):
	// spent whether the limits admit it or not, up to MaxDebt beyond an
	// empty quota, the rest forgiven; the decision is then a peek's.
	Charge bool
	// MaxDebt is the debt bound of the Limiter that built the request
	// (WithDebt), carried by each of its requests: a meter's state up to
	// MaxDebt intervals beyond empty, or a window's count up to Rate +
	// MaxDebt, is a debt, not a clock that stepped back. 0 for none.
	MaxDebt int64
	// BlockFor is the penalty box (WithBlockFor): a denial blocks the key for
	// this long, and a request during a block is refused (see
	// TakeRequest.DecideBlocking); 0 for none.
	BlockFor time.Duration

	// plan holds what the Limiter that built the request computed once for
	// its algorithm and limits (see prepared).
	plan *plan
}

// Resetter is implemented by stores that can forget a key, e.g. after a
// successful login resets a failed-attempts limit.
type Resetter interface {
	Reset(ctx context.Context, req TakeRequest) error
}
