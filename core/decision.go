package core

import "time"

// Decision is a store's answer to one request. Being limited is a decision, not
// an error. One a Limiter returns also remembers when it was decided and what
// it spent, for Limiter.Refund, so it is == only to Decisions of that call.
type Decision struct {
	// Allowed reports whether the request was admitted (and its cost spent).
	Allowed bool
	// Exceeds reports a cost above the limit's capacity: no wait will admit it.
	Exceeds bool
	// Blocked reports a request refused because its key's penalty box
	// (WithBlockFor), started by an earlier denial, still runs: RetryAfter
	// is the time left of the block (a peek while it runs reports it too).
	Blocked bool
	// BlockStarted reports the denial that started the key's penalty box:
	// RetryAfter is the whole WithBlockFor duration.
	BlockStarted bool
	// Limit is the limit that governs the decision: the one that denied it, or,
	// when every limit allowed it, the one with the least remaining.
	Limit Limit
	// Index is the position of Limit among the limiter's limits.
	Index int
	// Remaining is what may still be spent now under Limit.
	Remaining int64
	// ResetAfter is the time until Limit's quota is whole again.
	ResetAfter time.Duration
	// RetryAfter is, for a denied request, the earliest time after which it
	// could be admitted (always positive); 0 when admitted.
	RetryAfter time.Duration
	// Delay is how long an admitted leaky-bucket request waits for its turn.
	Delay time.Duration
	// Debt is what the key owes beyond an empty quota under Limit, after a
	// settle charged more than it had (see Limiter.Settle and WithDebt): the
	// meters' emission intervals, the windows' count above Rate. 0 for a
	// limiter without a debt bound.
	Debt int64

	// at is the instant (µs since the epoch) the Limiter decided at, and
	// spent the cost it asked for: what Limiter.Refund gives back against.
	// Both are 0 in a Decision no Limiter returned.
	at, spent int64
}
