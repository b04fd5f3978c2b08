package memory

import (
	"sync/atomic"
)

// Slot keys: 0 is an empty slot, 1 a dead one (a tombstone: never reused until
// the table is rebuilt, so a lock-free reader that matched a key can never see
// another key's state in the slot). A live key is a tag (bit 2 set, bit 0
// clear) with bit 0 as its CLOCK reference bit.
const (
	emptyKey uint64 = 0
	deadKey  uint64 = 1
	refBit   uint64 = 1
)

// slot is one key and its value: an inline one-word state (a meter's T, or a
// packed window with its packing) or an entry pointer.
type slot[V any] struct {
	key atomic.Uint64
	val V
}

// table is an open-addressing hash table with linear probing. Lookups are
// lock-free; inserts, removals and rebuilds happen under the shard's mutex.
// A rebuilt table replaces the old one through index.cur.
type table[V any] struct {
	slots []slot[V]
	mask  uint64
}

// home is a key's first slot. Its low three bits are fixed (the reference bit,
// and bit 2, set in every tag) and its top bits chose the shard, so the slot
// comes from the bits in between.
func home(key, mask uint64) uint64 { return key >> 3 & mask }

func newTable[V any](capacity int) *table[V] {
	return &table[V]{slots: make([]slot[V], capacity), mask: uint64(capacity - 1)}
}

// find probes for tag and returns its slot, touching its reference bit.
func (t *table[V]) find(tag uint64) (*slot[V], bool) {
	for i := home(tag, t.mask); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		k := s.key.Load()
		if k == emptyKey {
			return nil, false
		}
		if k&^refBit == tag {
			if k&refBit == 0 {
				s.key.CompareAndSwap(k, k|refBit)
			}
			return s, true
		}
	}
}

// valueOps are the value-specific steps of the table's bookkeeping, all run
// under the shard's mutex.
type valueOps[V any] struct {
	// move freezes from so lock-free writers retry on the new table, and copies
	// its value to to; it reports false when from was already dead.
	move func(from, to *V) bool
	// kill makes the value dead so lock-free writers holding it retry. Unless
	// force is set, it does so only while the state has recovered by now (a
	// writer may have just spent from it), and reports whether it did.
	kill func(v *V, now int64, force bool) bool
}

// index is one shard's table of one value kind, with its bookkeeping.
type index[V any] struct {
	cur    atomic.Pointer[table[V]]
	live   int
	dead   int
	hand   uint64
	maxCap int
	ops    valueOps[V]
}

const minCap = 8

func (x *index[V]) init(maxCap int, ops valueOps[V]) {
	x.maxCap, x.ops = maxCap, ops
	x.cur.Store(newTable[V](min(minCap, maxCap)))
}

// tableCap is the largest table a shard needs for n keys: a power of two with
// n at no more than 5/8 load, which leaves room for an eighth of dead slots
// between rebuilds even at the bound.
func tableCap(n int) int {
	c := minCap
	for c*5/8 < n {
		c *= 2
	}
	return c
}

// liveKeys returns the number of keys the table holds. The caller holds the
// shard's mutex.
func (x *index[V]) liveKeys() int { return x.live }

// find looks up tag in the current table.
func (x *index[V]) find(tag uint64) (*slot[V], bool) { return x.cur.Load().find(tag) }

// claim returns the empty slot where tag goes. The caller holds the mutex, has
// checked that tag is absent and made room; it fills the slot's value, then
// calls publish.
func (x *index[V]) claim(tag uint64) *slot[V] {
	t := x.cur.Load()
	for i := home(tag, t.mask); ; i = (i + 1) & t.mask {
		if s := &t.slots[i]; s.key.Load() == emptyKey {
			return s
		}
	}
}

// publish makes a claimed slot visible. The key is stored after the value, so
// a lock-free reader that sees the key sees a complete slot.
func (x *index[V]) publish(s *slot[V], tag uint64) {
	s.key.Store(tag)
	x.live++
}

// remove kills the value in s and marks the slot dead. Unless force is set it
// removes only a state that has recovered by now, and reports whether it did.
func (x *index[V]) remove(s *slot[V], now int64, force bool) bool {
	if !x.ops.kill(&s.val, now, force) {
		return false
	}
	s.key.Store(deadKey)
	x.live--
	x.dead++
	return true
}

// grow makes the table ready for one more key: it doubles it (up to the
// shard's bound) when too full of live keys, or rebuilds it when too full of
// dead ones.
func (x *index[V]) grow() {
	t := x.cur.Load()
	if (x.live+x.dead+1)*4 > len(t.slots)*3 {
		size := len(t.slots)
		if (x.live+1)*8 > size*3 && size < x.maxCap {
			size *= 2
		}
		x.rebuild(size)
	}
}

// evict runs the CLOCK hand until one key is gone: recovered state goes
// whatever its reference bit; otherwise a referenced key loses its bit and an
// unreferenced one is evicted. Two turns of the hand always find one. It
// reports whether the key it removed was evicted (its state had not
// recovered) rather than reclaimed.
func (x *index[V]) evict(now int64) bool {
	t := x.cur.Load()
	for range 2*len(t.slots) + 1 {
		s := &t.slots[x.hand&t.mask]
		x.hand++
		k := s.key.Load()
		if k == emptyKey || k == deadKey {
			continue
		}
		if x.remove(s, now, false) {
			return false
		}
		if k&refBit == 0 && x.remove(s, now, true) {
			return true
		}
		s.key.CompareAndSwap(k, k&^refBit)
	}
	return false
}

// reclaim runs the CLOCK hand over at most budget slots and removes the
// first state that has recovered by now, leaving every reference bit as it
// is; it reports whether it removed one. Bounded, so a full store that
// refuses new keys does no O(n) scan per refusal.
func (x *index[V]) reclaim(now int64, budget int) bool {
	t := x.cur.Load()
	for range min(budget, len(t.slots)) {
		s := &t.slots[x.hand&t.mask]
		x.hand++
		if k := s.key.Load(); k != emptyKey && k != deadKey && x.remove(s, now, false) {
			return true
		}
	}
	return false
}

// rebuild copies the live keys into a new table of the given size, dropping
// the dead ones, and publishes it.
func (x *index[V]) rebuild(size int) {
	old := x.cur.Load()
	t := newTable[V](size)
	live := 0
	for i := range old.slots {
		s := &old.slots[i]
		k := s.key.Load()
		if k == emptyKey || k == deadKey {
			continue
		}
		for j := home(k, t.mask); ; j = (j + 1) & t.mask {
			d := &t.slots[j]
			if d.key.Load() == emptyKey {
				if x.ops.move(&s.val, &d.val) {
					d.key.Store(k)
					live++
				}
				break
			}
		}
	}
	x.live, x.dead = live, 0
	x.cur.Store(t)
}

// sweep removes every recovered state and shrinks a table left mostly empty.
func (x *index[V]) sweep(now int64) {
	t := x.cur.Load()
	for i := range t.slots {
		s := &t.slots[i]
		if k := s.key.Load(); k != emptyKey && k != deadKey {
			x.remove(s, now, false)
		}
	}
	size := len(t.slots)
	for size > minCap && x.live*8 < size {
		size /= 2
	}
	if size != len(t.slots) || x.dead > 0 {
		x.rebuild(size)
	}
}
