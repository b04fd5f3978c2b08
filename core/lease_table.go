package core

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// The table of a Limiter's token leases: a fixed number of sets of
// leaseWays entries, a key's set chosen by its hash, so that unique keys
// never grow it. A key new to a full set takes the place of the set's least
// recently used entry (whose unspent tokens go back to the store). Each set
// has one lock, held only to read or change an entry, never across a call.

// leaseWays is the number of entries in a set.
const leaseWays = 8

// leaseSlot is one lease: tokens left, spendable until exp, granted at at
// (µs on the Limiter's clock).
type leaseSlot struct {
	tokens, exp, at int64
}

// valid reports whether s holds tokens spendable at now.
func (s *leaseSlot) valid(now int64) bool { return s.tokens > 0 && now < s.exp }

// leaseEntry is one key's leases and what decides their size.
type leaseEntry struct {
	key string
	// gen changes whenever the entry is given to another key, so a refresh
	// started for the old key finds it gone.
	gen  uint64
	last int64 // µs of the key's last decision, for eviction
	// size is L, the size of the next lease (1: a plain Take; 0 before the
	// key's first decision).
	size int64
	// since and count measure the key's local rate: count decisions since
	// the instant since.
	since, count int64
	// cur is the lease being spent; next a refresh's, spent after it.
	cur, next leaseSlot
	// index and remaining are the governing limit's position and the
	// store's Remaining after the last call; reset is its ResetAfter then,
	// as an instant (µs).
	index            int
	remaining, reset int64
	// denied is the instant (µs) until which the store's last denial of
	// the key, of deniedCost, is repeated locally.
	denied, deniedCost int64
	// refreshing is set while a lease call of the key (a refresh, or a
	// request's) is on its way; landed is closed when it lands. asking is
	// what the lease calls on their way asked for: with the leases, at most
	// Max.
	refreshing bool
	landed     chan struct{}
	asking     int64
	// askedAt is the instant (µs) the lease call that set refreshing
	// started: with the lease calls' latency, when it should land.
	askedAt int64
	// shortAt is the instant (µs) the store decided the key's last lease
	// call, when it granted fewer tokens than asked (the key is at its
	// limit), 0 when that call granted all; shortEnd is then the end of the
	// governing limit's window (µs).
	shortAt, shortEnd int64
}

// leaseSet is one set of the table, padded so two sets' locks never share
// a cache line.
type leaseSet struct {
	mu sync.Mutex
	e  [leaseWays]leaseEntry
	// local counts the decisions this set's entries made with no store
	// call: spent from a lease, or a denial repeated.
	local int64
	_     [40]byte
}

// leaseTable is a Limiter's table of token leases.
type leaseTable struct {
	sets []leaseSet
	mask uint64
	seed maphash.Seed
	gens atomic.Uint64 // the last gen given (see claim)
}

// newLeaseTable returns a table of about keys entries (a power of two sets).
func newLeaseTable(keys int) *leaseTable {
	n := 1
	for n*leaseWays < keys {
		n *= 2
	}
	return &leaseTable{sets: make([]leaseSet, n), mask: uint64(n - 1), seed: maphash.MakeSeed()}
}

// set returns key's set.
func (t *leaseTable) set(key string) *leaseSet {
	return &t.sets[maphash.String(t.seed, key)&t.mask]
}

// find returns key's entry in s, or nil; s is locked.
func (s *leaseSet) find(key string) *leaseEntry {
	for i := range s.e {
		if e := &s.e[i]; e.gen != 0 && e.key == key {
			return e
		}
	}
	return nil
}

// claim returns key's entry in s, taking the place of the least recently
// used one when key has none, and what the entry it took held (its key and
// unspent leases, to give back); s is locked.
func (t *leaseTable) claim(s *leaseSet, key string, now int64) (e *leaseEntry, old leaseEntry) {
	if e = s.find(key); e != nil {
		return e, leaseEntry{}
	}
	e = &s.e[0]
	for i := range s.e {
		c := &s.e[i]
		if c.gen == 0 {
			e = c
			break
		}
		if c.last < e.last {
			e = c
		}
	}
	old = *e
	*e = leaseEntry{key: key, gen: t.gens.Add(1), last: now, since: now, remaining: -1}
	return e, old
}
