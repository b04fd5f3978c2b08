package memory

import (
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// entry holds the states of one key under the algorithms that need more than
// one word, or under several limits.
//
// Entries are recycled: a killed entry goes to its shard's free list and the
// next new key of the shard takes it, so a flood of unique keys that evict
// one another allocates nothing and leaves no dead entries for the garbage
// collector. Were every new key a new allocation, the collector would let the
// dead ones pile up to the size of the live heap between cycles, and the
// survivors, scattered over every span that pile filled, would keep twice
// their size in use. A lock-free reader may still hold a recycled entry it
// found before the entry was killed; it tells by tag (and dead) under the
// entry's mutex, and looks the key up again.
type entry struct {
	mu   sync.Mutex
	dead bool // killed, or not yet published; under mu
	// blocking: states' array holds one more State past their length, whose
	// T is the end of the key's penalty box (penalty.go); under mu.
	blocking bool
	tag      uint64 // the key whose states these are; under mu
	freshAt  atomic.Int64
	states   []core.State
	one      [1]core.State
	// limits are the figures the states were written under (names aside),
	// so an edited limit re-expresses them (core.TakeRequest.Reexpress).
	limits   []core.Limit
	oneLimit [1]core.Limit
}

// maxFree bounds a shard's free list: enough for a flood, in which each new
// key evicts one, without keeping what a sweep drops.
const maxFree = 64

// maxKeptLog is the longest sliding-log ring a recycled entry keeps (in
// timestamps); a longer one is left to the collector.
const maxKeptLog = 8

func moveEntry(from, to *atomic.Pointer[entry]) bool {
	to.Store(from.Load())
	return true
}

// killEntry kills the entry in p (see valueOps.kill) and keeps it for a new
// key when the free list has room. The caller holds the shard's mutex.
func (sh *shard) killEntry(p *atomic.Pointer[entry], now int64, force bool) bool {
	e := p.Load()
	e.mu.Lock()
	if !force && e.freshAt.Load() > now {
		e.mu.Unlock()
		return false
	}
	e.dead = true
	e.mu.Unlock()
	p.Store(nil) // the dead slot must not keep the entry alive until a rebuild
	sh.recycle(e)
	return true
}

// recycle keeps a dead entry for a new key, if the free list has room. The
// caller holds the shard's mutex.
func (sh *shard) recycle(e *entry) {
	if len(sh.free) < maxFree {
		sh.free = append(sh.free, e)
	}
}

// newEntry returns a dead entry holding n fresh states, from the free list
// when it has one. The caller holds the shard's mutex. No reader reads the
// states of a dead entry, so they are written without the entry's mutex.
func (sh *shard) newEntry(n int) *entry {
	var e *entry
	if k := len(sh.free); k > 0 {
		e = sh.free[k-1]
		sh.free[k-1] = nil
		sh.free = sh.free[:k-1]
	} else {
		e = &entry{dead: true}
	}
	switch {
	case n == 1:
		e.states = e.one[:]
	case cap(e.states) < n || &e.states[:1][0] == &e.one[0]:
		e.states = make([]core.State, n)
	default:
		e.states = e.states[:n]
	}
	for i := range e.states {
		log := e.states[i].Log
		if len(log) > maxKeptLog {
			log = nil
		}
		e.states[i] = core.State{Log: log}
	}
	return e
}

// takeEntry decides under the key's entry lock, inserting the entry under the
// shard's mutex when the key is new.
func (sh *shard) takeEntry(tag uint64, req *core.TakeRequest, now int64) (core.Decision, error) {
	var d core.Decision
	for {
		if s, ok := sh.entries.find(tag); ok {
			if e := s.val.Load(); e != nil {
				if held, err := e.decideHeld(&d, tag, req, now); held {
					return d, err
				}
			}
		}
		sh.mu.Lock()
		if _, ok := sh.entries.find(tag); ok {
			sh.mu.Unlock()
			continue
		}
		err := sh.insertEntry(&d, tag, req, now)
		sh.mu.Unlock()
		return d, err
	}
}

// decideHeld decides req on e's states, under e's mutex, when e still holds
// tag's states; it reports false when e was killed or has passed to another
// key since the caller found it, and the caller looks the key up again.
func (e *entry) decideHeld(d *core.Decision, tag uint64, req *core.TakeRequest, now int64) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || e.tag != tag {
		return false, nil
	}
	if !core.SameFigures(e.limits, req.Limits) && validLimits(req) {
		req.Reexpress(e.states, e.limits, now)
		e.setLimits(req.Limits)
	}
	err := e.decide(d, req, now)
	e.freshAt.Store(e.freshAtOf(req))
	return true, err
}

// setLimits records the figures e's states are written under, in e's own
// array for one limit, so a key allocates nothing for them.
func (e *entry) setLimits(limits []core.Limit) {
	if len(limits) == 1 {
		e.oneLimit[0] = limits[0]
		e.limits = e.oneLimit[:]
		return
	}
	if cap(e.limits) < len(limits) || &e.limits[:1][0] == &e.oneLimit[0] {
		e.limits = make([]core.Limit, 0, len(limits))
	}
	e.limits = append(e.limits[:0], limits...)
}

// insertEntry decides a request for a key the shard does not hold, on fresh
// states, and inserts them when the request spent something. The caller
// holds the shard's mutex.
func (sh *shard) insertEntry(d *core.Decision, tag uint64, req *core.TakeRequest, now int64) error {
	e := sh.newEntryFor(req)
	if len(req.Limits) == 1 {
		// A window edited to a limit whose counts no longer pack brings
		// them along.
		if w, from, ok := sh.takeOverWindow(tag); ok {
			e.states[0] = req.UnpackUnder(w, from, now)
		} else if t, ok := sh.takeOverWord(tag, req, now); ok {
			e.states[0].T = t
		}
	}
	err := e.decide(d, req, now)
	if err != nil || e.freshAtOf(req) == 0 {
		sh.recycle(e)
		return err
	}
	if !sh.makeRoom(entryTable, now) {
		sh.recycle(e)
		*d = core.Decision{}
		return errFull
	}
	e.mu.Lock()
	e.tag, e.dead = tag, false
	e.setLimits(req.Limits)
	e.freshAt.Store(e.freshAtOf(req))
	e.mu.Unlock()
	sh.entries.grow()
	s := sh.entries.claim(tag)
	s.val.Store(e)
	sh.entries.publish(s, tag)
	return nil
}

// validLimits reports whether req's algorithm can enforce every one of its
// limits: figures a store may record its states as written under (Decide
// refuses the others).
func validLimits(req *core.TakeRequest) bool {
	for _, l := range req.Limits {
		if req.Algorithm.ValidateLimit(l) != nil {
			return false
		}
	}
	return true
}
