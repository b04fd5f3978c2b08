package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// maxLeaseBackground bounds a Limiter's background lease calls (refreshes
// and give-backs) running at once; past it, a refresh waits for the next
// request's turn and a give-back is dropped (its tokens are lost, as a
// crashed instance's are, within the bound).
const maxLeaseBackground = 64

// leaseState is a Limiter's token lease (WithTokenLease) and its table.
type leaseState struct {
	cfg      TokenLease
	leaser   TokenLeaser
	table    *leaseTable
	fleetMax int64 // Fleet x Max: a window's key with this little left leases 1
	window   bool  // the algorithm is a window (else a meter)
	ttlUs    int64

	bg  sync.WaitGroup
	bgN atomic.Int64
	// latency is the lease calls' latency (µs, on the Limiter's clock), a
	// moving average (see observe); 0 before the first.
	latency atomic.Int64
	// timers holds stopped timers for the requests that wait for a lease
	// call on its way (see await), used again so a wait allocates nothing.
	timers chan *time.Timer
	// What TokenLeaseStats reports (local spends are counted per set).
	decisions, calls, refreshes, leased, returned, failures atomic.Int64
}

func (s *leaseState) init(leaser TokenLeaser, alg Algorithm) {
	s.leaser = leaser
	keys := s.cfg.Keys
	if keys == 0 {
		keys = DefaultTokenLeaseKeys
	}
	s.table = newLeaseTable(keys)
	s.fleetMax = int64(max(1, s.cfg.Fleet)) * s.cfg.Max
	s.window = alg == FixedWindow || alg == SlidingWindow
	s.ttlUs = s.cfg.TTL.Microseconds()
	s.timers = make(chan *time.Timer, maxLeaseBackground)
}

// spendOrAwait decides key's request of n from its lease at now, waiting
// a moment for a lease call on its way when the lease is empty and the key
// is not at its limit (see spend); ok is false when the store must decide.
func (s *leaseState) spendOrAwait(ctx context.Context, l *Limiter, key string, n int64, now time.Time) (d Decision, ok bool) {
	us := Micros(now)
	d, ok, landed := s.spend(l, key, n, us)
	if !ok && landed != nil && s.await(ctx, landed) {
		d, ok, _ = s.spend(l, key, n, us)
	}
	if ok {
		d.at = us
		if d.Allowed {
			d.spent = n
		}
	}
	return d, ok
}

// spend decides key's request of n from its lease, with no store call, at
// now (µs). When the key holds too few tokens, it repeats the store's last
// denial while it runs, or denies at once a key at its limit whose lease
// call is on its way (see refuse); else ok is false, and landed is the
// channel of a lease call on its way worth waiting for (see landedSoon), or
// nil. It starts a refresh when the lease runs low or old.
func (s *leaseState) spend(l *Limiter, key string, n, now int64) (d Decision, ok bool, landed chan struct{}) {
	set := s.table.set(key)
	set.mu.Lock()
	e := set.find(key)
	if e == nil {
		set.mu.Unlock()
		return Decision{}, false, nil
	}
	if !s.ready(l, key, e, n, now) {
		if d, ok = e.deny(l, n, now); !ok {
			d, ok = s.refuse(l, e, n, now)
		}
		if ok {
			set.local++
		} else {
			landed = s.landedSoon(e, now)
		}
		set.mu.Unlock()
		return d, ok, landed
	}
	e.cur.tokens -= n
	e.last = now
	e.count++
	set.local++
	d = Decision{Allowed: true, Limit: l.limits[e.index], Index: e.index,
		Remaining: max(0, e.remaining) + e.cur.tokens + e.next.tokens}
	if e.reset > now {
		d.ResetAfter = micros(e.reset - now)
	}
	var want int64
	if room := s.cfg.Max - e.cur.tokens - e.next.tokens - e.asking; room > 1 && !e.refreshing {
		if want = s.due(e, room, now); want > 1 {
			want = min(s.resize(e, now), want)
		}
		if want > 1 {
			e.refreshing, e.landed, e.askedAt = true, make(chan struct{}), now
			e.asking += want
		}
	}
	gen := e.gen
	set.mu.Unlock()
	if want > 1 {
		if s.background(func(ctx context.Context) { s.refresh(ctx, l, key, gen, want) }) {
			s.refreshes.Add(1) // counted as it starts, before the request is answered
		} else {
			s.landed(key, gen, want, true) // too many calls on their way: the next request's turn
		}
	}
	return d, true, nil
}

// deny repeats, for a request of n at now, the denial the store last gave
// the key (of n or less) while its RetryAfter runs, at most the lease's TTL
// (see note); e's set is locked.
func (e *leaseEntry) deny(l *Limiter, n, now int64) (Decision, bool) {
	if now >= e.denied || n < e.deniedCost {
		return Decision{}, false
	}
	e.last = now
	e.count++
	d := Decision{Limit: l.limits[e.index], Index: e.index, Remaining: max(0, e.remaining), RetryAfter: micros(e.denied - now)}
	if e.reset > now {
		d.ResetAfter = micros(e.reset - now)
	}
	return d, true
}

// ready reports whether e's current lease can pay n at now, moving the next
// lease in when the current one is spent or over; e's set is locked.
func (s *leaseState) ready(l *Limiter, key string, e *leaseEntry, n, now int64) bool {
	if e.cur.tokens >= n && now < e.cur.exp {
		return true
	}
	if e.next.tokens < n || now >= e.next.exp {
		return false
	}
	s.giveBack(l, key, e.cur, now)
	e.cur, e.next = e.next, leaseSlot{}
	return true
}

// resize sets e's next lease size from the key's local rate since the last
// resize (count decisions since since): the tokens it spends in TTL/2, at
// most twice the last size and at most Max; 1 for a key's first decision,
// and for a window once the store's remaining quota is at most Fleet x Max
// (so its last tokens are decided one by one). A meter's quota refills as
// it goes, so near its limit it keeps its size and waits for that many
// tokens instead (see note). e's set is locked.
func (s *leaseState) resize(e *leaseEntry, now int64) int64 {
	size := int64(1)
	switch elapsed := now - e.since; {
	case e.size == 0: // the key's first decision: cold
	case elapsed > 0:
		target := int64(float64(e.count) * float64(s.ttlUs) / 2 / float64(elapsed))
		size = max(1, min(target, 2*e.size, s.cfg.Max))
	default: // another decision at the same instant (a clock's tick): hot
		size = min(2*e.size, s.cfg.Max)
	}
	if s.window && e.remaining >= 0 && e.remaining <= s.fleetMax {
		size = 1
	}
	e.size, e.since, e.count = size, now, 0
	return size
}

// note records a store decision of key's, of cost n at now (µs), in e: a
// denial is repeated locally for its RetryAfter, at most ttl (µs), so that a
// reset or refund on another instance reaches this one within ttl; e's set
// is locked.
func (e *leaseEntry) note(d *Decision, n, now, ttl, refill int64) {
	e.index, e.remaining, e.reset = d.Index, d.Remaining, now+d.ResetAfter.Microseconds()
	e.denied, e.deniedCost = 0, 0
	if !d.Allowed && d.RetryAfter > 0 {
		wait := d.RetryAfter.Microseconds()
		if refill > 0 && e.size > 1 { // a meter's lease waits for its size
			wait += (e.size - 1) * refill
		}
		e.denied, e.deniedCost = now+min(wait, ttl), n
	}
}

// refill is the time (µs) one more token of a meter's governing limit d
// takes to come back, 0 for a window.
func (s *leaseState) refill(l *Limiter, d *Decision) int64 {
	if s.window || d.Index >= len(l.limits) {
		return 0
	}
	return l.limits[d.Index].EmissionInterval().Microseconds()
}

// call decides key's request of n through the store, at now: a plain Take
// while the key is cold (or near its limit), else a lease of the key's size,
// whose tokens beyond n are kept for the key's next requests.
func (s *leaseState) call(ctx context.Context, l *Limiter, key string, n int64, now time.Time) (Decision, error) {
	us := Micros(now)
	set := s.table.set(key)
	set.mu.Lock()
	e, old := s.table.claim(set, key, us)
	e.last = us
	e.count++
	if !e.cur.valid(us) {
		s.giveBack(l, key, e.cur, us)
		e.cur = leaseSlot{}
	}
	size, gen := s.resize(e, us), e.gen
	var want int64
	mine := false
	if size > 1 {
		// The key's leases and the lease calls on their way hold at most
		// Max: what is left of it, or a plain Take when not even n is.
		if room := s.cfg.Max - e.cur.tokens - e.next.tokens - e.asking; room >= n {
			want = max(n, min(size, room))
			e.asking += want
			if !e.refreshing {
				e.refreshing, e.landed, e.askedAt, mine = true, make(chan struct{}), us, true
			}
		} else {
			size = 1
		}
	}
	set.mu.Unlock()
	s.giveBack(l, old.key, old.cur, us)
	s.giveBack(l, old.key, old.next, us)
	s.decisions.Add(1)
	s.calls.Add(1)
	req := l.request(key, n, now)
	if size <= 1 {
		d, err := l.store.Take(ctx, req)
		if err == nil {
			s.noteDecision(l, key, gen, &d, n, us)
		}
		return d, err
	}
	g, err := s.leaser.LeaseTokens(ctx, req, want, s.cfg.TTL)
	if err == nil {
		s.observe(Micros(l.now()) - us)
		err = s.checkGrant(&g, n, want)
	}
	if err == nil {
		s.keep(l, key, gen, &g, n, want, us)
	}
	s.landed(key, gen, want, mine)
	if err != nil {
		return Decision{}, err
	}
	d := g.Decision
	if g.Granted > 0 {
		d.Remaining += g.Granted - n
	}
	return d, nil
}

// wrapGrant is an error wrapping ErrTokenGrant.
func wrapGrant(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrTokenGrant}, args...)...)
}

// checkGrant refuses a grant outside the lease's terms.
func (s *leaseState) checkGrant(g *TokenGrant, n, want int64) error {
	switch {
	case g.Granted < 0 || g.Granted > want || (g.Granted > 0 && g.Granted < n):
		return wrapGrant("%d tokens granted, %d to %d asked for", g.Granted, n, want)
	case g.Granted > 0 && (g.TTL <= 0 || g.TTL > s.cfg.TTL || !g.Decision.Allowed):
		return wrapGrant("a grant of %d for %s", g.Granted, g.TTL)
	case g.Granted == 0 && g.Decision.Allowed:
		return wrapGrant("an admission with no tokens granted")
	}
	return nil
}

// keep records the grant g of a lease call of want (n of it spent at now,
// µs) in key's entry, if the entry is still key's (gen), as its current
// lease or, while that one lasts, its next, and whether the store granted
// fewer than want (the key is at its limit, see refuse); else gives the
// unspent tokens back.
func (s *leaseState) keep(l *Limiter, key string, gen uint64, g *TokenGrant, n, want, now int64) {
	s.leased.Add(g.Granted)
	slot := leaseSlot{tokens: g.Granted - n, exp: now + g.TTL.Microseconds(), at: now}
	set := s.table.set(key)
	set.mu.Lock()
	e := set.find(key)
	if e == nil || e.gen != gen {
		set.mu.Unlock()
		s.giveBack(l, key, slot, now)
		return
	}
	e.note(&g.Decision, max(1, n), now, s.ttlUs, s.refill(l, &g.Decision))
	e.shortAt, e.shortEnd = 0, 0
	if g.Granted < want {
		e.shortAt, e.shortEnd = now, now+g.Decision.ResetAfter.Microseconds()
	}
	if g.Granted == 0 {
		e.size = 1
	}
	if slot.tokens > 0 {
		s.hold(l, key, e, slot, now)
	}
	set.mu.Unlock()
}

// hold puts slot into e's leases, never holding more than Max tokens of a
// key at once (so tokens stranded in one instance's leases are at most Max):
// what does not fit goes back. The lease that ends first is the current
// one, spent first. e's set is locked.
func (s *leaseState) hold(l *Limiter, key string, e *leaseEntry, slot leaseSlot, now int64) {
	for _, sl := range []*leaseSlot{&e.cur, &e.next} {
		if !sl.valid(now) {
			s.giveBack(l, key, *sl, now)
			*sl = leaseSlot{}
		}
	}
	if room := max(0, s.cfg.Max-e.cur.tokens-e.next.tokens); slot.tokens > room {
		extra := slot
		extra.tokens -= room
		s.giveBack(l, key, extra, now)
		slot.tokens = room
	}
	switch {
	case slot.tokens == 0:
	case e.cur.tokens == 0:
		e.cur, e.next = e.next, leaseSlot{}
		if e.cur.tokens == 0 {
			e.cur = slot
			return
		}
		e.next = slot
	case e.cur.exp == slot.exp:
		e.cur.tokens += slot.tokens
	case e.next.tokens == 0:
		e.next = slot
	case e.next.exp == slot.exp:
		e.next.tokens += slot.tokens
	default:
		s.giveBack(l, key, slot, now)
	}
	if e.next.tokens > 0 && e.next.exp < e.cur.exp { // spend first what ends first
		e.cur, e.next = e.next, e.cur
	}
}

// noteDecision records a Take's decision of key's at now (µs), if its
// entry is still key's.
func (s *leaseState) noteDecision(l *Limiter, key string, gen uint64, d *Decision, n, now int64) {
	set := s.table.set(key)
	set.mu.Lock()
	if e := set.find(key); e != nil && e.gen == gen {
		e.note(d, n, now, s.ttlUs, s.refill(l, d))
	}
	set.mu.Unlock()
}

// forget drops key's leases without giving them back (a reset forgot what
// they were counted against).
func (s *leaseState) forget(key string) {
	if s == nil || s.table == nil {
		return
	}
	set := s.table.set(key)
	set.mu.Lock()
	if e := set.find(key); e != nil {
		e.cur, e.next, e.size, e.denied, e.shortAt = leaseSlot{}, leaseSlot{}, 1, 0, 0
	}
	set.mu.Unlock()
}

// now reads the limiter's clock as AllowN does.
func (l *Limiter) now() time.Time {
	if l.sys {
		return SystemClock{}.Now()
	}
	return l.clock.Now()
}
