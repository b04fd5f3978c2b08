package memory

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

var (
	_ core.InFlightStore = (*Store)(nil)
	_ core.SlotPeeker    = (*Store)(nil)
)

// inflightTable holds the in-flight slots of the keys that have asked for
// one: a counter per key (by its seeded hash, never the key), found without
// a lock. A counter whose slots are all free is retired by Sweep, or by an
// insert that finds the table at its bound, so the table holds at most the
// store's key bound, and no more counters than keys with running requests
// once swept.
type inflightTable struct {
	m     sync.Map // uint64 -> *slotCounter
	n     atomic.Int64
	bound int64
	mu    sync.Mutex // serializes retiring when the table is full
}

// slotCounter is the number of a key's slots held; retired (-1) once the
// table dropped it, so that a request that found it just before must look
// again.
type slotCounter struct {
	n atomic.Int64
}

const retired = -1

// Acquire takes one of req.Key's slots when fewer than req.InFlight.Slots are
// held: one compare-and-swap on the key's counter, no allocation for a key
// the store holds. The memory store's slots live as long as the process that
// holds them: a lease has no deadline (Lease.Deadline is zero), is released
// by the handler's end (the Limiter's Slot), and needs no renewal. A new key
// finding the table at the store's key bound, with no counter free to
// retire, gets an error wrapping core.ErrStoreFull.
func (s *Store) Acquire(_ context.Context, req core.LeaseRequest) (core.LeaseDecision, error) {
	if s.closed.Load() {
		return core.LeaseDecision{}, core.ErrStoreClosed
	}
	if err := req.Check(); err != nil {
		return core.LeaseDecision{}, err
	}
	t := &s.inflight
	tag := maphash.Comparable(s.seed, [2]string{req.Namespace, req.Key})
	for {
		c, err := t.counter(tag)
		if err != nil {
			return core.LeaseDecision{}, err
		}
		for v := c.n.Load(); v != retired; v = c.n.Load() {
			if v >= req.InFlight.Slots {
				return core.Refused(req.InFlight, v, 0), nil
			}
			if c.n.CompareAndSwap(v, v+1) {
				lease := core.Lease{Duration: req.InFlight.Lease, Handle: c}
				return core.LeaseDecision{Allowed: true, Lease: lease, InFlight: req.InFlight, Held: v + 1}, nil
			}
		}
		t.m.CompareAndDelete(tag, c) // retired under us: look again
	}
}

// counter returns tag's counter, inserting a fresh one.
func (t *inflightTable) counter(tag uint64) (*slotCounter, error) {
	if c, ok := t.m.Load(tag); ok {
		return c.(*slotCounter), nil
	}
	if t.n.Load() >= t.bound {
		t.mu.Lock()
		if t.n.Load() >= t.bound {
			t.retireFree()
		}
		full := t.n.Load() >= t.bound
		t.mu.Unlock()
		if full {
			return nil, fmt.Errorf("%w: %d keys hold in-flight slots", core.ErrStoreFull, t.bound)
		}
	}
	c, loaded := t.m.LoadOrStore(tag, new(slotCounter))
	if !loaded {
		t.n.Add(1)
	}
	return c.(*slotCounter), nil
}

// retireFree drops every counter with no slot held.
func (t *inflightTable) retireFree() {
	t.m.Range(func(k, v any) bool {
		if c := v.(*slotCounter); c.n.CompareAndSwap(0, retired) {
			t.m.CompareAndDelete(k, v)
			t.n.Add(-1)
		}
		return true
	})
}

// sweep retires the counters of keys with no request running.
func (t *inflightTable) sweep() {
	t.mu.Lock()
	t.retireFree()
	t.mu.Unlock()
}

// Renew renews nothing: the memory store's leases have no deadline. It
// reports every lease as held.
func (s *Store) Renew(_ context.Context, _ time.Time, leases []core.Lease, expired []bool) error {
	if len(expired) != len(leases) {
		return fmt.Errorf("%w: %d leases, %d results", core.ErrInvalidOption, len(leases), len(expired))
	}
	clear(expired)
	return nil
}

// Release gives lease's slot back: one compare-and-swap. It must be called once
// per lease, as the Limiter's Slot does (the memory store does not tell one
// lease of a key from another); a lease the memory store did not grant is an
// error wrapping core.ErrInvalidOption.
func (s *Store) Release(_ context.Context, lease core.Lease) error {
	c, ok := lease.Handle.(*slotCounter)
	if !ok || c == nil {
		return fmt.Errorf("%w: not a memory store's lease", core.ErrInvalidOption)
	}
	for v := c.n.Load(); v > 0; v = c.n.Load() {
		if c.n.CompareAndSwap(v, v-1) {
			return nil
		}
	}
	return fmt.Errorf("%w: no slot of the key is held", core.ErrLeaseReleased)
}

// PeekSlots returns the number of in-flight slots of req.Key held now,
// changing nothing: what the operator's tool reports.
func (s *Store) PeekSlots(_ context.Context, req core.LeaseRequest) (int64, error) {
	if len(req.Namespace) > 256 {
		return 0, fmt.Errorf("%w: namespace longer than 256 bytes", core.ErrInvalidOption)
	}
	c, ok := s.inflight.m.Load(maphash.Comparable(s.seed, [2]string{req.Namespace, req.Key}))
	if !ok {
		return 0, nil
	}
	return max(c.(*slotCounter).n.Load(), 0), nil
}
