package core

import (
	"fmt"
	"strings"
)

// Algorithm names one of the six rate-limiting algorithms. Every store applies
// every algorithm, and decides exactly as [Algorithm.ApplyAll] does.
//
// A refund of n ([Limiter.Refund]) gives back, under each limit: for the
// meters (token and leaky bucket, GCRA), n emission intervals, never past
// full, until Burst intervals after the admission; for the fixed window, n
// from the admission's window while it is current; for the sliding window, n
// from the admission's window while it is the current or the previous one;
// for the sliding log, the n latest entries not after the admission that are
// still in the window. Counts never drop below 0.
//
// A clock that steps back never mints quota and never locks a key out for
// the size of the step: state further ahead of now than any real history
// could leave it (a meter's T beyond now + Burst intervals, a window that
// starts after the one holding now, log entries after now) reads as "empty at
// now", and a spend or a refund writes it so, after which the key recovers at
// its normal pace (10/s: one request 100 ms after the step). Smaller steps
// keep the state as it is: no refill until the clock catches up.
type Algorithm uint8

// The six algorithms; the README's table says when to pick each.
const (
	// TokenBucket: up to Burst at once, refilled at Rate per Period. Its
	// decisions equal GCRA's (one timestamp, no rounding drift).
	TokenBucket Algorithm = iota + 1
	// LeakyBucket is a queue: requests leave one per Period/Rate, up to Burst
	// wait (Decision.Delay, which the middleware holds), the rest are denied.
	LeakyBucket
	// FixedWindow allows Rate per aligned window of Period (up to 2x Rate
	// across a boundary).
	FixedWindow
	// SlidingLog keeps every admitted timestamp: exactly Rate in any window
	// of Period, at up to Rate timestamps per key.
	SlidingLog
	// SlidingWindow estimates the sliding log from two counters: the current
	// window's, plus the previous one's weighted by its overlap.
	SlidingWindow
	// GCRA is the generic cell rate algorithm: an exact meter in one
	// timestamp, bursts up to Burst.
	GCRA
)

var algorithmNames = [...]string{
	TokenBucket:   "token-bucket",
	LeakyBucket:   "leaky-bucket",
	FixedWindow:   "fixed-window",
	SlidingLog:    "sliding-log",
	SlidingWindow: "sliding-window",
	GCRA:          "gcra",
}

// Algorithms lists the six algorithms in a stable order.
func Algorithms() []Algorithm {
	return []Algorithm{TokenBucket, LeakyBucket, FixedWindow, SlidingLog, SlidingWindow, GCRA}
}

// String returns the algorithm's name as ParseAlgorithm reads it, e.g. "gcra".
func (a Algorithm) String() string {
	if a.valid() {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

func (a Algorithm) valid() bool { return a >= TokenBucket && a <= GCRA }

// Validate reports an error wrapping ErrInvalidAlgorithm when a is not one of the six.
func (a Algorithm) Validate() error {
	if !a.valid() {
		return fmt.Errorf("%w: %d", ErrInvalidAlgorithm, uint8(a))
	}
	return nil
}

// ParseAlgorithm reads an algorithm name: token-bucket, leaky-bucket,
// fixed-window, sliding-log, sliding-window or gcra (case-insensitive,
// underscores accepted for dashes).
func ParseAlgorithm(s string) (Algorithm, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	for _, a := range Algorithms() {
		if algorithmNames[a] == n {
			return a, nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want one of token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window, gcra)", ErrInvalidAlgorithm, truncate(s))
}

// usesBurst reports whether the algorithm takes a burst other than Rate.
func (a Algorithm) usesBurst() bool { return a == TokenBucket || a == LeakyBucket || a == GCRA }

// OneWord reports whether the algorithm's whole state is State.T, so a store
// may keep it in a single 64-bit word (and update it with compare-and-swap).
func (a Algorithm) OneWord() bool { return a.usesBurst() }

// Capacity returns the largest cost that can ever fit under l: the burst for the
// token bucket, leaky bucket and GCRA, the rate for the window algorithms.
func (a Algorithm) Capacity(l Limit) int64 {
	if a.usesBurst() {
		return l.burst()
	}
	return l.Rate
}

// ValidateLimit reports whether a can enforce l: a valid limit, no burst
// other than Rate for the windows, at most MaxLogRate for the sliding log.
func (a Algorithm) ValidateLimit(l Limit) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return err
	}
	if l.Calendar != 0 && a != FixedWindow && a != SlidingWindow {
		return fmt.Errorf("%w: %s cannot follow calendar %ss (its windows are not of one length); use fixed-window or sliding-window for %s", ErrInvalidLimit, a, l.Calendar, l)
	}
	if !a.usesBurst() && l.burst() != l.Rate {
		return fmt.Errorf("%w: %s counts Rate per window and takes no burst (got burst %d for rate %d); use token-bucket, leaky-bucket or gcra for bursts", ErrInvalidLimit, a, l.Burst, l.Rate)
	}
	if a == SlidingLog && l.Rate > MaxLogRate {
		return fmt.Errorf("%w: sliding-log keeps one timestamp per admitted request, so its rate is capped at %d (got %d); use sliding-window or gcra", ErrInvalidLimit, MaxLogRate, l.Rate)
	}
	return nil
}

// MaxLogRate is the highest rate the sliding log accepts: it keeps up to Rate
// timestamps (8 bytes each) per key.
const MaxLogRate = 100_000
