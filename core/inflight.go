package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// InFlight is an in-flight (concurrency) limit: at most Slots requests of one
// key running at once, on every instance that shares the store. A request
// holds a slot from the moment it is admitted until its handler returns; the
// slot is a lease with a deadline, renewed while the request runs (see
// WithInFlight), so that the slots of a crashed instance come back by
// themselves once their deadline passes. It is a plain comparable value.
//
// An in-flight limit rides beside a limiter's rate limits (a policy may have
// both): a request must pass the rates and then find a free slot.
type InFlight struct {
	// Slots is N, the number of requests of one key that may run at once,
	// from 1 to MaxInFlightSlots.
	Slots int64
	// Lease is how long a slot stays held without renewal, from MinLease to
	// MaxLease: the longest a crashed instance's slot stays taken. A running
	// request's lease is renewed every Lease/3.
	Lease time.Duration
}

const (
	// MaxInFlightSlots is the largest in-flight limit: more slots than a
	// key's requests could ever hold at once on any real fleet, and a bound
	// on what a key's lease set costs in a shared store.
	MaxInFlightSlots = 10_000
	// DefaultLease is the lease Concurrent gives a slot: a crashed
	// instance's slots come back within 30 seconds, at the cost of one
	// renewal round every 10 seconds while requests run.
	DefaultLease = 30 * time.Second
	// MinLease is the shortest lease: renewals every MinLease/3 are the most
	// a store is asked to bear.
	MinLease = 10 * time.Millisecond
	// MaxLease is the longest lease.
	MaxLease = time.Hour
	// InFlightRetryAfter is the RetryAfter of a refused in-flight request.
	// A slot frees the moment a running request of the key ends, which no
	// one can predict: the deadline of the held leases only bounds how long
	// a crashed holder keeps its slot, and is no promise. One second is the
	// smallest wait Retry-After can say in whole seconds.
	InFlightRetryAfter = time.Second
)

var (
	// ErrLeaseExpired reports an in-flight lease whose deadline passed before
	// it was renewed: its slot went back to the key (another request may hold
	// it now), and nothing was renewed or released.
	ErrLeaseExpired = errors.New("ratewarden: in-flight lease expired")
	// ErrLeaseReleased reports a Slot released a second time: the first
	// release gave the slot back, the second changes nothing.
	ErrLeaseReleased = errors.New("ratewarden: in-flight lease already released")
)

// Concurrent returns the in-flight limit of n requests of a key at once, with
// the DefaultLease.
func Concurrent(n int64) InFlight { return InFlight{Slots: n, Lease: DefaultLease} }

// IsZero reports whether f is the zero InFlight: no in-flight limit.
func (f InFlight) IsZero() bool { return f == InFlight{} }

// String returns f as "N concurrent".
func (f InFlight) String() string { return strconv.FormatInt(f.Slots, 10) + " concurrent" }

// Validate returns an error wrapping ErrInvalidLimit for an in-flight limit
// that cannot be enforced: Slots below 1 or above MaxInFlightSlots, a lease
// outside [MinLease, MaxLease].
func (f InFlight) Validate() error {
	switch {
	case f.Slots <= 0:
		return fmt.Errorf("%w: in-flight limit of %d slots: it must be at least 1", ErrInvalidLimit, f.Slots)
	case f.Slots > MaxInFlightSlots:
		return fmt.Errorf("%w: in-flight limit of %d slots is above the maximum of %d", ErrInvalidLimit, f.Slots, MaxInFlightSlots)
	case f.Lease <= 0:
		return fmt.Errorf("%w: in-flight lease of %s: it must be positive", ErrInvalidLimit, f.Lease)
	case f.Lease < MinLease || f.Lease > MaxLease:
		return fmt.Errorf("%w: in-flight lease of %s is outside [%s, %s]", ErrInvalidLimit, f.Lease, MinLease, MaxLease)
	}
	return nil
}

// InFlightStore is implemented by stores that hold in-flight leases (found by
// type assertion, like Resetter): the memory store and the Redis stores. A
// Limiter calls it; package testing/storetest checks it.
type InFlightStore interface {
	// Acquire takes one of req.Key's slots when fewer than req.InFlight.Slots
	// are held (leases past their deadline are dropped first), in one atomic
	// step. Being refused is a LeaseDecision, not an error.
	Acquire(ctx context.Context, req LeaseRequest) (LeaseDecision, error)
	// Renew moves the deadline of each lease to now plus its Duration, in
	// place, and sets expired[i] for a lease no longer held (its deadline
	// passed, or it was released): that one is neither renewed nor counted
	// again. len(expired) is len(leases).
	Renew(ctx context.Context, now time.Time, leases []Lease, expired []bool) error
	// Release gives lease's slot back. Releasing a lease that expired or was
	// released already changes nothing.
	Release(ctx context.Context, lease Lease) error
}

// LeaseRequest is what a Limiter asks of an InFlightStore's Acquire.
type LeaseRequest struct {
	// Key identifies the client; Namespace separates limiters, as in
	// TakeRequest.
	Key, Namespace string
	// InFlight is the limit: how many slots, leased for how long.
	InFlight InFlight
	// Now is the caller's time; a store on its own clock may ignore it.
	Now time.Time
}

// Check returns an error wrapping ErrInvalidLimit for an invalid InFlight,
// or ErrInvalidOption for a namespace longer than 256 bytes: what a store's
// Acquire returns before asking anything.
func (r LeaseRequest) Check() error {
	if len(r.Namespace) > 256 {
		return fmt.Errorf("%w: namespace longer than 256 bytes", ErrInvalidOption)
	}
	return r.InFlight.Validate()
}

// Lease is one held slot, as a store returns it and takes it back.
type Lease struct {
	// Key is where the store keeps the key's slots ("" for the memory store).
	Key string
	// ID names the lease among the key's slots ("" for the memory store).
	ID string
	// Deadline is when the slot comes back by itself unless renewed; zero
	// for a store whose slots live and die with the process holding them
	// (the memory store), which need no renewal.
	Deadline time.Time
	// Duration is the lease length a renewal extends it by.
	Duration time.Duration
	// Handle is the store's own reference to the slot.
	Handle any
}

// LeaseDecision is an InFlightStore's answer to Acquire.
type LeaseDecision struct {
	// Allowed reports whether a slot was taken.
	Allowed bool
	// Lease is the slot taken, when Allowed.
	Lease Lease
	// InFlight is the limit that decided.
	InFlight InFlight
	// Held is the number of the key's slots held after the decision (this
	// request's included when Allowed).
	Held int64
	// RetryAfter is, when refused, InFlightRetryAfter; 0 when allowed.
	RetryAfter time.Duration
	// NextDeadline is, when refused by a store whose leases have deadlines,
	// the time until the earliest held lease's deadline: the longest the
	// slot of a crashed holder can stay taken, not a promise that one frees
	// then. Zero otherwise.
	NextDeadline time.Duration
}

// Refused returns the LeaseDecision of a request refused under f with held
// slots taken and the earliest deadline next away (0 when unknown).
func Refused(f InFlight, held int64, next time.Duration) LeaseDecision {
	return LeaseDecision{InFlight: f, Held: held, RetryAfter: InFlightRetryAfter, NextDeadline: max(next, 0)}
}

// SlotPeeker is implemented by InFlightStores that count a key's held slots
// without taking one, for the operator's tool (Limiter.PeekSlots).
type SlotPeeker interface {
	// PeekSlots returns the number of req.Key's slots held now (leases past
	// their deadline not counted), changing nothing.
	PeekSlots(ctx context.Context, req LeaseRequest) (int64, error)
}
