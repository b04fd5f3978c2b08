package core

import (
	"fmt"
	"time"
)

// The penalty box: with WithBlockFor(d), a key that a limiter denies is
// refused for d from that denial, whatever its limits would say meanwhile.
// The block is part of the key's state in the store (every instance sharing
// the store sees it) and is decided in the same atomic step as the rate:
//
//   - a spend (cost > 0) denied by the limits, with no block running,
//     starts one of BlockFor; the Decision's BlockStarted is set and its
//     RetryAfter is BlockFor. A cost no wait would admit (Decision.Exceeds) is
//     refused on its own and starts no block: it says nothing of the
//     client's rate, and one oversized request must not lock a client out.
//   - while a block runs, every request of the key is refused (Blocked) and
//     spends nothing, a peek (cost 0) included, so a peek tells the block's
//     end; RetryAfter is the time left.
//   - a refund during a block still gives back what its admission spent
//     (never more than core's refund rules allow), and a settle's charge
//     (TakeRequest.Charge) is still spent, as the work it pays for was
//     done: both report the block. A charge never starts a block.
//     store/luascript settles outside the penalty-box script: there a
//     charge is spent and reports no block.
//   - a reset of the key lifts its block, and a block that has ended is
//     forgotten (a clock that steps back later never brings it back).
//   - a block further ahead of now than BlockFor (a clock that stepped back,
//     or a policy whose BlockFor was shortened) is cut to end BlockFor from
//     now, as state a stepped-back clock left ahead is rebased.
//
// A block never mints quota: it refuses, and changes no limit's state.

// ValidateBlockFor checks a penalty-box duration: 0 (none) or a positive
// whole number of microseconds up to MaxPeriod. The error wraps
// ErrInvalidOption.
func ValidateBlockFor(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("%w: block duration %s is negative", ErrInvalidOption, d)
	case d > MaxPeriod:
		return fmt.Errorf("%w: block duration %s is longer than the maximum %s", ErrInvalidOption, d, MaxPeriod)
	case d%time.Microsecond != 0:
		return fmt.Errorf("%w: block duration %s is not a whole number of microseconds", ErrInvalidOption, d)
	}
	return nil
}

// WithBlockFor puts the limiter's keys in a penalty box: once a key is
// denied (a spend its limits refuse; not a cost above their capacity), every
// request of that key is refused for d, whatever the limits say meanwhile,
// with RetryAfter the time left of the block. The block is kept in the store
// beside the key's state, so every limiter sharing the store sees it; Reset
// lifts it. d must be positive, a whole number of microseconds, at most
// MaxPeriod; the error wraps ErrInvalidOption. Tiers of the limiter share
// its block duration (each tier keeps its own keys' blocks).
func WithBlockFor(d time.Duration) Option {
	return func(l *Limiter) error {
		if d == 0 {
			return fmt.Errorf("%w: block duration 0: leave WithBlockFor out for no penalty box", ErrInvalidOption)
		}
		if err := ValidateBlockFor(d); err != nil {
			return err
		}
		l.blockFor = d
		return nil
	}
}

// BlockFor returns the limiter's penalty-box duration (WithBlockFor), 0 when
// it has none.
func (l *Limiter) BlockFor() time.Duration { return l.blockFor }

// BlockOnDenial returns how long (µs) a denial of r blocks its key: r's
// BlockFor for a spend (Cost > 0) whose cost every limit's capacity holds, 0
// for a peek, a refund, a settle's charge, a cost above a limit's capacity (which is denied
// with Exceeds and starts no block), or no BlockFor. A store deciding
// elsewhere (a Lua script) passes it along, so it starts a block exactly when
// DecideBlocking would.
func (r *TakeRequest) BlockOnDenial() int64 {
	if r.BlockFor <= 0 || r.Cost <= 0 || r.Charge {
		return 0
	}
	for i := range r.Limits {
		if r.Cost > r.Algorithm.Capacity(r.Limits[i]) {
			return 0
		}
	}
	return int64(r.BlockFor / time.Microsecond)
}

// DecideBlocking is Decide with r's penalty box (the store's part of
// WithBlockFor): until is the key's block end (µs since the epoch, 0 for
// none), kept by the store beside states, which DecideBlocking reads and
// updates. While the block runs the request is decided as a peek and
// refused; otherwise it is decided as Decide does, and a denial that
// BlockOnDenial says blocks starts a block. An invalid r.BlockFor is an
// error wrapping ErrInvalidOption, and changes nothing.
func (r *TakeRequest) DecideBlocking(d *Decision, states []State, until *int64, now int64) error {
	if err := ValidateBlockFor(r.BlockFor); err != nil {
		return err
	}
	block := int64(r.BlockFor / time.Microsecond)
	if *until-now > block { // a clock that stepped back, or a shortened block
		*until = now + block
	}
	if *until > now {
		wait := r.LimitWait(states, now)
		cost := r.Cost
		if cost > 0 && !r.Charge {
			r.Cost = 0 // refused: decided as a peek, spending nothing
		}
		err := r.Decide(d, states, now)
		r.Cost = cost
		if err != nil {
			return err
		}
		d.ApplyBlock(*until, now, false, wait)
		return nil
	}
	*until = 0
	if err := r.Decide(d, states, now); err != nil {
		return err
	}
	if b := r.BlockOnDenial(); b > 0 && !d.Allowed && !d.Exceeds {
		*until = now + b
		d.ApplyBlock(*until, now, true, d.RetryAfter)
	}
	return nil
}

// ApplyBlock marks d, decided at now (µs since the epoch), as refused by a
// block of its key that ends at until (µs): not allowed, nothing remaining,
// Blocked, or BlockStarted when started (the denial that started the
// block), and RetryAfter the later of the block's end and wait, what the
// limits alone would make the request wait (the denial's own RetryAfter for
// a block it starts, LimitWait for a running one): a client whose quota is
// spent for longer than the block is told when its quota admits it, not when
// the block ends. ResetAfter is at least RetryAfter. A store deciding
// elsewhere (a Lua script) calls it on the Decision it built for the
// request (as a peek, when the block was already running). until <= now
// changes nothing.
func (d *Decision) ApplyBlock(until, now int64, started bool, wait time.Duration) {
	if until <= now {
		return
	}
	left := max(micros(until-now), wait)
	d.Allowed, d.Exceeds, d.Blocked, d.BlockStarted = false, false, !started, started
	d.Remaining, d.Delay = 0, 0
	d.RetryAfter = left
	d.ResetAfter = max(d.ResetAfter, left)
}

// LimitWait returns how long r's limits alone would make r wait at now, on
// states (the key's states before r, which it leaves as they are): a
// denial's RetryAfter, or 0 when they would admit it now. It is 0 for the
// sliding log (a copy of its state would share its log) and for a request
// that is not a spend.
func (r *TakeRequest) LimitWait(states []State, now int64) time.Duration {
	if r.Cost <= 0 || r.Charge || r.Algorithm == SlidingLog {
		return 0
	}
	var buf [4]State
	cp := append(buf[:0], states...)
	peek := *r
	peek.BlockFor = 0
	var d Decision
	if err := peek.Decide(&d, cp, now); err != nil || d.Allowed {
		return 0
	}
	return d.RetryAfter
}
