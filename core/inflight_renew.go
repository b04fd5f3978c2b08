package core

import (
	"context"
	"sync"
	"time"
)

// renewer keeps a limiter's held leases alive: one goroutine, started with
// the first lease that has a deadline and ended at the first round that finds
// none held, renews them all every Lease/3 in one batched store call.
type renewer struct {
	in      *inflightState
	mu      sync.Mutex
	held    map[*slotState]heldLease
	running bool
}

// heldLease is what the renewer knows of a held slot: the generation it was
// added under, and whether its lease expired before a renewal reached it.
type heldLease struct {
	gen     uint64
	expired bool
}

// add registers s, held under gen, for renewal.
func (r *renewer) add(s *slotState, gen uint64) {
	r.mu.Lock()
	if r.held == nil {
		r.held = make(map[*slotState]heldLease)
	}
	r.held[s] = heldLease{gen: gen}
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start {
		go r.loop()
	}
}

// remove stops renewing s and returns its lease as last renewed, and whether
// it expired first.
func (r *renewer) remove(s *slotState) (Lease, bool) {
	r.mu.Lock()
	h := r.held[s]
	delete(r.held, s)
	lease := s.lease
	r.mu.Unlock()
	return lease, h.expired
}

// loop renews every Lease/3 until a round finds nothing held.
func (r *renewer) loop() {
	every := r.in.f.Lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		ctx, cancel := context.WithTimeout(context.Background(), every)
		_, _, more, _ := r.round(ctx)
		cancel()
		if !more {
			return
		}
	}
}

// round renews every held lease in one store call. more is false when none
// was held (the loop then ends, and the next add starts another).
func (r *renewer) round(ctx context.Context) (renewed, expired int, more bool, err error) {
	r.mu.Lock()
	if len(r.held) == 0 {
		r.running = false
		r.mu.Unlock()
		return 0, 0, false, nil
	}
	slots := make([]*slotState, 0, len(r.held))
	gens := make([]uint64, 0, len(r.held))
	leases := make([]Lease, 0, len(r.held))
	for s, h := range r.held {
		if !h.expired {
			slots, gens, leases = append(slots, s), append(gens, h.gen), append(leases, s.lease)
		}
	}
	r.mu.Unlock()
	if len(leases) == 0 {
		return 0, 0, true, nil
	}
	now := r.in.base.clock.Now()
	gone := make([]bool, len(leases))
	before := make([]time.Time, len(leases))
	for i := range leases {
		before[i] = leases[i].Deadline
	}
	err = r.in.st.Renew(ctx, now, leases, gone)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range slots {
		h, ok := r.held[s]
		if !ok || h.gen != gens[i] {
			continue // released meanwhile
		}
		switch {
		case err != nil:
			// Not renewed: a lease whose deadline passed is gone in the store.
			h.expired = !before[i].After(now)
		case gone[i]:
			h.expired = true
		default:
			s.lease.Deadline = leases[i].Deadline
			renewed++
		}
		if h.expired {
			expired++
			r.in.lost.Add(1)
		}
		r.held[s] = h
	}
	return renewed, expired, true, err
}

// RenewSlots runs one renewal round now, as the limiter's renewer does every
// Lease/3 while slots with a deadline are held: each held lease's deadline
// moves to now plus its Lease, in one batched store call. It returns how many
// leases were renewed and how many had expired (their slots are gone: their
// Release returns ErrLeaseExpired and gives nothing back). For tests and
// tools that move a manual clock; an application never needs to call it.
func (l *Limiter) RenewSlots(ctx context.Context) (renewed, expired int, err error) {
	if l.inflight == nil {
		return 0, 0, nil
	}
	renewed, expired, _, err = l.inflight.ren.round(ctx)
	return renewed, expired, err
}
