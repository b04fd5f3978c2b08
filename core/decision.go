package core

import "time"

// Decision is a store's answer to one request. Being limited is a decision, not
// an error.
type Decision struct {
	// Allowed reports whether the request was admitted (and its cost spent).
	Allowed bool
	// Exceeds reports that the cost is larger than the limit's capacity, so no
	// wait will ever admit it. Allowed is then false.
	Exceeds bool
	// Limit is the limit that governs the decision: the one that denied it, or,
	// when every limit allowed it, the one with the least remaining.
	Limit Limit
	// Index is the position of Limit among the limiter's limits.
	Index int
	// Remaining is what may still be spent now under Limit (after this request,
	// when it was admitted).
	Remaining int64
	// ResetAfter is the time until Limit's quota is whole again (for the window
	// algorithms, until the window that holds the spending ends).
	ResetAfter time.Duration
	// RetryAfter is 0 when the request was admitted; otherwise the earliest time
	// after which the same request could be admitted, always positive.
	RetryAfter time.Duration
	// Delay is, for the leaky bucket, how long an admitted request must wait for
	// its turn in the queue before it is passed on; 0 otherwise.
	Delay time.Duration
}
