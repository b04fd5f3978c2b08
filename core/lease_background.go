package core

import (
	"context"
	"errors"
	"time"
)

// The background of a Limiter's token leases: the calls that give unspent
// tokens back, and what the leases did (TokenLeaseStats).

// TokenLeaseStats counts what a Limiter's token leases did since it was
// built: for a policy's metrics (never per key).
type TokenLeaseStats struct {
	// Decisions is the number of decisions of a positive cost.
	Decisions int64
	// Local is how many of them were decided with no store call: from a
	// lease, a denial the store gave repeated while its RetryAfter runs (at
	// most TTL), or the denial of a key at its limit whose lease call is on
	// its way (see TokenLease).
	Local int64
	// Calls is the number of store calls made for decisions, refreshes and
	// give-backs: Calls / Decisions is the store calls per decision.
	Calls int64
	// Refreshes is the number of background refreshes of a lease, counted
	// as they start.
	Refreshes int64
	// Leased is the number of tokens the store granted to leases.
	Leased int64
	// Returned is the number of unspent tokens given back.
	Returned int64
	// Failures is the number of lease calls (refreshes, give-backs) that
	// failed or whose grant was refused (ErrTokenGrant).
	Failures int64
}

// TokenLeaseStats returns what the limiter's token leases did since it was
// built; the zero value when it leases nothing.
func (l *Limiter) TokenLeaseStats() TokenLeaseStats {
	s := l.lease
	if s == nil || s.table == nil {
		return TokenLeaseStats{}
	}
	st := TokenLeaseStats{Calls: s.calls.Load(), Refreshes: s.refreshes.Load(), Leased: s.leased.Load(),
		Returned: s.returned.Load(), Failures: s.failures.Load()}
	for i := range s.table.sets {
		set := &s.table.sets[i]
		set.mu.Lock()
		st.Local += set.local
		set.mu.Unlock()
	}
	st.Decisions = st.Local + s.decisions.Load()
	return st
}

// giveBack returns slot's unspent tokens of key to the store in the
// background, as a refund admitted when they were granted. A fixed window's
// expired lease has nothing to give (its window is over).
func (s *leaseState) giveBack(l *Limiter, key string, slot leaseSlot, now int64) {
	if slot.tokens <= 0 || (slot.exp <= now && l.alg == FixedWindow) {
		return
	}
	s.background(func(ctx context.Context) { s.refund(ctx, l, key, slot) })
}

// refund gives slot's tokens of key back to the store.
func (s *leaseState) refund(ctx context.Context, l *Limiter, key string, slot leaseSlot) error {
	now := l.now()
	req := l.request(key, -slot.tokens, now)
	if at := time.UnixMicro(slot.at); at.Before(now) {
		req.Admitted = at
	}
	s.calls.Add(1)
	if _, err := l.store.Take(ctx, req); err != nil {
		s.failures.Add(1)
		return err
	}
	s.returned.Add(slot.tokens)
	return nil
}

// background runs f in a goroutine with a context that ends after the
// lease's TTL, unless maxLeaseBackground calls run already; it reports
// whether f runs.
func (s *leaseState) background(f func(ctx context.Context)) bool {
	if s.bgN.Add(1) > maxLeaseBackground {
		s.bgN.Add(-1)
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.bgN.Add(-1)
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TTL)
		defer cancel()
		f(ctx)
	}()
	return true
}

// ReturnLeasedTokens waits for the limiter's lease calls in the background
// (refreshes, give-backs), then gives every unspent leased token back to the
// store, one refund per lease, and forgets the leases: for a shutdown, so
// that a stopped instance strands no quota. The limiter stays usable (its
// hot keys lease again). It returns the store's errors, joined; nil for a
// limiter that leases nothing; ctx's error when ctx ends while a background
// call still runs (a store that does not answer), leaving the leases as
// they are.
func (l *Limiter) ReturnLeasedTokens(ctx context.Context) error {
	s := l.lease
	if s == nil || s.table == nil {
		return nil
	}
	if err := s.awaitBackground(ctx); err != nil {
		return err
	}
	type held struct {
		key  string
		slot leaseSlot
	}
	var all []held
	now := Micros(l.now())
	for i := range s.table.sets {
		set := &s.table.sets[i]
		set.mu.Lock()
		for j := range set.e {
			e := &set.e[j]
			for _, sl := range []*leaseSlot{&e.cur, &e.next} {
				if sl.valid(now) || (sl.tokens > 0 && l.alg != FixedWindow) {
					all = append(all, held{e.key, *sl})
				}
				*sl = leaseSlot{}
			}
		}
		set.mu.Unlock()
	}
	var errs []error
	for _, h := range all {
		if err := s.refund(ctx, l, h.key, h.slot); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// awaitBackground waits for s's background lease calls, or for ctx to end,
// whichever comes first: a call stuck on a store that does not answer ends
// only at its own timeout (the lease's TTL).
func (s *leaseState) awaitBackground(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.bg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
