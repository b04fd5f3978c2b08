package core

import (
	"context"
	"time"
)

// A token lease's refreshes: a lease call of a key's tokens started in the
// background before its lease runs out, and the requests that wait a moment
// for a lease call on its way instead of asking the store themselves.

// refresh asks the store for a lease of want of key's tokens in the
// background, and keeps it for the key's next requests; a failure leaves
// the held tokens to be spent until they expire.
func (s *leaseState) refresh(ctx context.Context, l *Limiter, key string, gen uint64, want int64) {
	now := l.now()
	us := Micros(now)
	s.calls.Add(1)
	s.refreshes.Add(1)
	g, err := s.leaser.LeaseTokens(ctx, l.request(key, 1, now), want, s.cfg.TTL)
	if err == nil {
		err = s.checkGrant(&g, 1, want)
	}
	if err == nil {
		s.keep(l, key, gen, &g, 0, us)
	} else {
		s.failures.Add(1)
	}
	s.landed(key, gen, want, true)
}

// landed marks a lease call of want of key's tokens (its entry gen) as
// landed and, for the call that set refreshing (mine), wakes the requests
// that wait for it.
func (s *leaseState) landed(key string, gen uint64, want int64, mine bool) {
	set := s.table.set(key)
	set.mu.Lock()
	if e := set.find(key); e != nil && e.gen == gen {
		e.asking = max(0, e.asking-want)
		if mine && e.refreshing {
			e.refreshing = false
			close(e.landed)
		}
	}
	set.mu.Unlock()
}

// maxRefreshWait bounds how long a request that finds its key's lease empty
// waits for a refresh on its way before it asks the store itself: about a
// store call's time, so a slow refresh never holds a request up much longer
// than its own call would.
const maxRefreshWait = time.Millisecond

// awaitRefresh waits, when key's lease is empty and a refresh of it is on
// its way, for the refresh to land (or ctx to end, or maxRefreshWait), and
// reports whether it landed: the request then tries the lease again instead
// of calling the store itself (and being refused for tokens the refresh is
// taking).
func (s *leaseState) awaitRefresh(ctx context.Context, key string) bool {
	set := s.table.set(key)
	set.mu.Lock()
	var landed chan struct{}
	if e := set.find(key); e != nil && e.refreshing {
		landed = e.landed
	}
	set.mu.Unlock()
	if landed == nil {
		return false
	}
	t := time.NewTimer(maxRefreshWait)
	defer t.Stop()
	select {
	case <-landed:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}
