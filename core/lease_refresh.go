package core

import (
	"context"
	"time"
)

// A token lease's refreshes: a lease call of a key's tokens started in the
// background before its lease runs out (early enough for the lease calls'
// latency), and what a request that finds its key's lease empty while a
// lease call is on its way does: denied at once when the key is at its
// limit, else it waits a moment for the call instead of asking the store
// itself, unless the call will not be back in that moment.

// refresh asks the store for a lease of want of key's tokens in the
// background, and keeps it for the key's next requests; a failure leaves
// the held tokens to be spent until they expire.
func (s *leaseState) refresh(ctx context.Context, l *Limiter, key string, gen uint64, want int64) {
	now := l.now()
	us := Micros(now)
	s.calls.Add(1)
	g, err := s.leaser.LeaseTokens(ctx, l.request(key, 1, now), want, s.cfg.TTL)
	if err == nil {
		s.observe(Micros(l.now()) - us)
		err = s.checkGrant(&g, 1, want)
	}
	if err == nil {
		s.keep(l, key, gen, &g, 0, want, us)
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
// waits for a lease call on its way before it asks the store itself: about
// a store call's time, so a slow call never holds a request up much longer
// than its own call would.
const maxRefreshWait = time.Millisecond

// refuse denies, at once and locally, a request of n at now (µs) that
// found e's leases empty, when the key is at its limit and the lease calls
// on their way ask for at least n; ok is false otherwise. At its limit means
// that the key's last lease call was granted fewer tokens than it asked for
// (the store had no more), and, since then, the store can have regained no
// more tokens than those calls ask for: the same window, for a fixed
// window; for the meters and the sliding window, fewer emission intervals
// of the governing limit than the tokens asked (each gives back at most
// one). The only tokens the request could have had are then those the calls
// bring, which the key's next requests spend; so such denials are at most
// the tokens asked, at most Max per instance while a call is on its way,
// and the store still decides every grant. RetryAfter is the time the
// governing limit takes to give one token back (a fixed window's end). e's
// set is locked.
func (s *leaseState) refuse(l *Limiter, e *leaseEntry, n, now int64) (Decision, bool) {
	if e.shortAt == 0 || e.asking < n || e.index >= len(l.limits) {
		return Decision{}, false
	}
	lim := l.limits[e.index]
	retry := lim.interval()
	if l.alg == FixedWindow {
		retry = e.shortEnd - now
	} else if now-e.shortAt >= e.asking*retry {
		retry = 0
	}
	if retry <= 0 {
		return Decision{}, false
	}
	e.last = now
	e.count++
	d := Decision{Limit: lim, Index: e.index, RetryAfter: micros(retry)}
	if e.reset > now {
		d.ResetAfter = micros(e.reset - now)
	}
	return d, true
}

// landedSoon returns, for a request at now (µs) that found e's leases
// empty, the channel closed when the lease call on its way lands: nil when
// none is, or when the lease calls' latency says it lands after
// maxRefreshWait (a wait that would end before it, for nothing). e's set is
// locked.
func (s *leaseState) landedSoon(e *leaseEntry, now int64) chan struct{} {
	if !e.refreshing {
		return nil
	}
	if lat := s.latency.Load(); e.askedAt+lat > now+maxRefreshWait.Microseconds() {
		return nil
	}
	return e.landed
}

// await waits for landed to close, ctx to end or maxRefreshWait, whichever
// comes first, and reports whether landed closed: the request then tries
// the lease again instead of calling the store itself (and being refused
// for tokens the call on its way is taking). Its timer is one of s's, used
// again by later waits (a new one only past maxLeaseBackground waits at
// once).
func (s *leaseState) await(ctx context.Context, landed <-chan struct{}) bool {
	var t *time.Timer
	select {
	case t = <-s.timers:
		t.Reset(maxRefreshWait)
	default:
		t = time.NewTimer(maxRefreshWait)
	}
	ok, fired := false, false
	select {
	case <-landed:
		ok = true
	case <-ctx.Done():
	case <-t.C:
		fired = true
	}
	if !t.Stop() && !fired { // a tick left by GODEBUG=asynctimerchan=1 must not end the next wait
		select {
		case <-t.C:
		default:
		}
	}
	select {
	case s.timers <- t:
	default:
	}
	return ok
}

// observe folds a lease call's latency (µs) into s's moving average, by an
// eighth of the difference: a few calls follow a store that slows down.
func (s *leaseState) observe(us int64) {
	us = max(0, us)
	for {
		old := s.latency.Load()
		avg := old + (us-old)/8
		if old == 0 {
			avg = us
		}
		if s.latency.CompareAndSwap(old, avg) {
			return
		}
	}
}

// due returns how many tokens a refresh of e's leases started at now may
// ask for, room being what is left of Max beside them, or 0 when none is
// due: room when the current lease is down to half its size with no next
// one, or when the last of them has lived 3/4 of its TTL; else, when what
// e holds would be spent before a lease call started now is back (see
// early), what early says, if that is half a lease or more. A window's lease
// cut short by its window's end is not refreshed for its age: a refresh
// would land in the same window and end with it. e's set is locked.
func (s *leaseState) due(e *leaseEntry, room, now int64) int64 {
	last := &e.cur
	if e.next.tokens > 0 {
		last = &e.next
	} else if e.cur.tokens*2 <= e.size {
		return room
	}
	if life := last.exp - last.at; life >= s.ttlUs && now >= last.exp-life/4 {
		return room
	}
	if ask := min(room, s.early(e, now)); ask*2 >= e.size {
		return ask
	}
	return 0
}

// early returns, when the tokens e holds would be spent at the key's local
// rate (e.count decisions since e.since) in less than twice the lease calls'
// latency at now, so that a refresh started later would land after the
// lease is empty, the most a refresh started now should ask for: what the
// key spends in a TTL at that rate, less what it holds (tokens beyond it
// would end with their lease unspent). 0 otherwise. e's set is locked.
func (s *leaseState) early(e *leaseEntry, now int64) int64 {
	lat, held, elapsed := s.latency.Load(), e.cur.tokens+e.next.tokens, now-e.since
	switch {
	case lat == 0 || e.count == 0 || held*elapsed >= 2*lat*e.count:
		return 0
	case elapsed <= 0: // decisions at one instant: as fast as it gets
		return s.cfg.Max
	}
	return e.count*s.ttlUs/elapsed - held
}
