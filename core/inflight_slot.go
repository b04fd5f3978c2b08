package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// inflightState is a Limiter's in-flight limit, its store and the leases its
// renewer keeps alive. Tiers share their limiter's.
type inflightState struct {
	f     InFlight
	st    InFlightStore
	base  *Limiter // the limiter WithInFlight configured: its namespace, its clock
	held  atomic.Int64
	lost  atomic.Int64 // leases that expired while their request ran (SlotsExpired)
	slots sync.Pool    // of *slotState
	ren   renewer
	freed atomic.Pointer[chan struct{}] // closed at the next release (SlotFreed); nil when no one waits
}

// WithInFlight adds an in-flight limit: at most f.Slots requests of a key
// running at once, across every instance sharing the store (see InFlight).
// A request takes a slot with Limiter.Acquire and gives it back with
// Slot.Release; package httplimit does both around the handler. While slots
// with a deadline are held (a shared store's), one goroutine per limiter
// renews them every f.Lease/3 in batches, and ends once none is held. It
// returns an error wrapping ErrInvalidLimit for an invalid f, and one wrapping
// ErrUnsupported for a store that is not an InFlightStore. Tiers of the
// limiter share its in-flight limit and slots.
func WithInFlight(f InFlight) Option {
	return func(l *Limiter) error {
		if err := f.Validate(); err != nil {
			return err
		}
		st, ok := l.store.(InFlightStore)
		if !ok {
			return fmt.Errorf("%w: %T holds no in-flight leases", ErrUnsupported, l.store)
		}
		in := &inflightState{f: f, st: st, base: l}
		in.ren.in = in
		l.inflight = in
		return nil
	}
}

// InFlight returns the limiter's in-flight limit; the zero InFlight when it
// has none.
func (l *Limiter) InFlight() InFlight {
	if l.inflight == nil {
		return InFlight{}
	}
	return l.inflight.f
}

// SlotsHeld returns the number of slots this limiter (with its tiers) holds
// now, on this instance: a gauge for metrics, never per key.
func (l *Limiter) SlotsHeld() int64 {
	if l.inflight == nil {
		return 0
	}
	return l.inflight.held.Load()
}

// SlotsExpired returns how many slots this limiter (with its tiers) lost
// since it was made because their lease expired while their request still
// ran (the renewals did not reach the store in time, a store down for more
// than 2/3 of the lease): each such request ran beside up to N others, so a
// rising count means the in-flight bound was not held. A counter for the
// metrics modules.
func (l *Limiter) SlotsExpired() int64 {
	if l.inflight == nil {
		return 0
	}
	return l.inflight.lost.Load()
}

// Slot is a slot Acquire took: release it once the request ends, on every
// path (a defer). The zero Slot holds nothing, and releasing it does nothing.
// A Slot is a small value; copies refer to one slot, released once.
type Slot struct {
	s   *slotState
	gen uint64
}

// slotState is a held slot: its lease, and a generation that is odd while it
// is held, so that a stale Slot (released, its state reused) changes nothing.
type slotState struct {
	in    *inflightState
	lease Lease
	gen   atomic.Uint64
}

// Acquire takes one of key's in-flight slots, as the limiter's InFlight
// allows, in one store call. A refused request is a LeaseDecision with
// Allowed false and a zero Slot; an error means the store could not decide,
// or the limiter has no in-flight limit (wrapping ErrInvalidOption).
func (l *Limiter) Acquire(ctx context.Context, key string) (Slot, LeaseDecision, error) {
	in := l.inflight
	if in == nil {
		return Slot{}, LeaseDecision{}, fmt.Errorf("%w: the limiter has no in-flight limit (WithInFlight)", ErrInvalidOption)
	}
	now := in.base.clock.Now()
	d, err := in.st.Acquire(ctx, LeaseRequest{Key: key, Namespace: in.base.ns, InFlight: in.f, Now: now})
	if err != nil || !d.Allowed {
		return Slot{}, d, err
	}
	s, _ := in.slots.Get().(*slotState)
	if s == nil {
		s = &slotState{in: in}
	}
	s.lease = d.Lease
	gen := s.gen.Load() + 1 // odd: held
	s.gen.Store(gen)
	in.held.Add(1)
	if !d.Lease.Deadline.IsZero() {
		in.ren.add(s, gen)
	}
	return Slot{s: s, gen: gen}, d, nil
}

// Held reports whether s holds a slot not yet released.
func (s Slot) Held() bool { return s.s != nil && s.s.gen.Load() == s.gen }

// Release gives the slot back, in one store call (none for a slot whose lease
// expired). Releasing the zero Slot does nothing; releasing a Slot again
// returns an error wrapping ErrLeaseReleased and changes nothing; a slot
// whose lease expired while it was held (its renewal came too late) returns
// one wrapping ErrLeaseExpired, and gives back nothing: the slot went back
// by itself, and is never counted twice.
func (s Slot) Release(ctx context.Context) error {
	st := s.s
	if st == nil {
		return nil
	}
	if !st.gen.CompareAndSwap(s.gen, s.gen+1) {
		return ErrLeaseReleased
	}
	in := st.in
	in.held.Add(-1)
	lease, expired := st.lease, false
	if !lease.Deadline.IsZero() {
		lease, expired = in.ren.remove(st)
	}
	in.slots.Put(st)
	if expired {
		in.notifyFreed()
		return ErrLeaseExpired
	}
	err := in.st.Release(ctx, lease)
	in.notifyFreed()
	return err
}

// notifyFreed closes the channel SlotFreed handed out, if any: a load when
// no one waits.
func (in *inflightState) notifyFreed() {
	if in.freed.Load() == nil {
		return
	}
	if ch := in.freed.Swap(nil); ch != nil {
		close(*ch)
	}
}

// SlotFreed returns a channel closed the next time a slot of this limiter
// (or of its tiers) is released on this instance: for a caller waiting for a
// slot (httplimit.WithInFlightWait), which takes the channel, tries to
// acquire, and tries again when the channel closes. A slot another instance
// frees, or one whose lease runs out, closes nothing: such a waiter also
// tries again on a timer. It returns nil when the limiter has no in-flight
// limit.
func (l *Limiter) SlotFreed() <-chan struct{} {
	in := l.inflight
	if in == nil {
		return nil
	}
	for {
		if ch := in.freed.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if in.freed.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// PeekSlots returns the number of key's in-flight slots held now, on every
// instance sharing the store, changing nothing: what the operator's tool
// shows. It returns an error wrapping ErrInvalidOption when the limiter has
// no in-flight limit, and one wrapping ErrUnsupported for a store that is
// not a SlotPeeker.
func (l *Limiter) PeekSlots(ctx context.Context, key string) (int64, error) {
	in := l.inflight
	if in == nil {
		return 0, fmt.Errorf("%w: the limiter has no in-flight limit (WithInFlight)", ErrInvalidOption)
	}
	sp, ok := in.st.(SlotPeeker)
	if !ok {
		return 0, fmt.Errorf("%w: %T cannot count a key's slots", ErrUnsupported, in.st)
	}
	return sp.PeekSlots(ctx, LeaseRequest{Key: key, Namespace: in.base.ns, InFlight: in.f, Now: in.base.clock.Now()})
}
