package memory

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// Sentinels in a one-word slot. States are timestamps, never negative.
const (
	wordMoved   int64 = -1 // the table was rebuilt: look the key up again
	wordDeleted int64 = -2 // the key was removed: insert it again
)

// entry holds the states of one key under the algorithms that need more than
// one word, or under several limits.
type entry struct {
	mu      sync.Mutex
	dead    bool
	freshAt atomic.Int64
	states  []core.State
	one     [1]core.State
}

// shard is one lock domain: a mutex for inserts and removals, and the two
// tables it guards. Lookups and updates of existing keys take no shard lock.
type shard struct {
	mu      sync.Mutex
	words   index[atomic.Int64]
	entries index[atomic.Pointer[entry]]
	bound   int
	refuse  bool          // refuse new keys when full instead of evicting
	evicted uint64        // keys evicted with live state, under mu
	refused uint64        // new keys refused when full, under mu
	seen    *atomic.Int64 // the store's latest request time seen by an insert
	_       [64]byte      // keep neighbouring shards' mutexes off one cache line
}

func (sh *shard) init(bound int, seen *atomic.Int64, refuse bool) {
	maxCap := tableCap(bound)
	sh.bound, sh.seen, sh.refuse = bound, seen, refuse
	sh.words.init(maxCap, valueOps[atomic.Int64]{move: moveWord, kill: killWord})
	sh.entries.init(maxCap, valueOps[atomic.Pointer[entry]]{move: moveEntry, kill: killEntry})
}

func moveWord(from, to *atomic.Int64) bool {
	for {
		v := from.Load()
		if from.CompareAndSwap(v, wordMoved) {
			to.Store(v)
			return v >= 0
		}
	}
}

func killWord(w *atomic.Int64, now int64, force bool) bool {
	for {
		v := w.Load()
		if !force && v > now {
			return false
		}
		if w.CompareAndSwap(v, wordDeleted) {
			return true
		}
	}
}

func moveEntry(from, to *atomic.Pointer[entry]) bool {
	to.Store(from.Load())
	return true
}

func killEntry(p *atomic.Pointer[entry], now int64, force bool) bool {
	e := p.Load()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !force && e.freshAt.Load() > now {
		return false
	}
	e.dead = true
	p.Store(nil) // the dead slot must not keep the entry alive until a rebuild
	return true
}

// reclaimBudget is how many slots of each table a full shard that refuses new
// keys searches for recovered state before it refuses.
const reclaimBudget = 64

// errFull is what Take returns for a new key a full shard refuses.
var errFull = fmt.Errorf("memory: key bound reached, new key refused: %w", core.ErrStoreFull)

// makeRoom notes the request time for the sweeper, and makes room for one
// key when the shard is at its bound, preferring the table the new key goes
// to: it evicts one key, or, when the shard refuses new keys, reclaims a
// recovered state found within reclaimBudget slots. It reports whether there
// is room.
func (sh *shard) makeRoom(forWords bool, now int64) bool {
	for v := sh.seen.Load(); now > v && !sh.seen.CompareAndSwap(v, now); v = sh.seen.Load() {
	}
	if sh.words.live+sh.entries.live < sh.bound {
		return true
	}
	wordsFirst := forWords && sh.words.live > 0 || sh.entries.live == 0
	if sh.refuse {
		if wordsFirst && sh.words.reclaim(now, reclaimBudget) || sh.entries.reclaim(now, reclaimBudget) ||
			!wordsFirst && sh.words.reclaim(now, reclaimBudget) {
			return true
		}
		sh.refused++
		return false
	}
	var evicted bool
	if wordsFirst {
		evicted = sh.words.evict(now)
	} else {
		evicted = sh.entries.evict(now)
	}
	if evicted {
		sh.evicted++
	}
	return true
}

// takeWord decides a one-word algorithm under one limit into d: a lock-free
// compare-and-swap on the key's slot, or, for a key not held, an insert under
// the shard's mutex.
func (sh *shard) takeWord(d *core.Decision, tag uint64, req *core.TakeRequest, now int64) error {
	for {
		if s, ok := sh.words.find(tag); ok {
			v, err := applyWord(d, &s.val, req, now)
			if v != wordDeleted {
				if v == wordMoved {
					continue
				}
				return err
			}
		}
		sh.mu.Lock()
		if _, ok := sh.words.find(tag); ok {
			sh.mu.Unlock()
			continue
		}
		var st [1]core.State
		err := req.Decide(d, st[:], now)
		if err == nil && st[0].T != 0 {
			if !sh.makeRoom(true, now) {
				sh.mu.Unlock()
				*d = core.Decision{}
				return errFull
			}
			sh.words.grow()
			s := sh.words.claim(tag)
			s.val.Store(st[0].T)
			sh.words.publish(s, tag)
		}
		sh.mu.Unlock()
		return err
	}
}

// applyWord runs the algorithm on a one-word state with compare-and-swap. It
// returns the sentinel it met, if any, instead of deciding. Only the next
// state is computed between the load and the swap, so the window in which
// another core can steal the word is a few instructions; the decision is built
// afterwards from the state the swap replaced.
func applyWord(d *core.Decision, w *atomic.Int64, req *core.TakeRequest, now int64) (int64, error) {
	for {
		v := w.Load()
		if v < 0 {
			return v, nil
		}
		if next := req.AdvanceWord(v, now); next == v || w.CompareAndSwap(v, next) {
			st := [1]core.State{{T: v}}
			return 0, req.Decide(d, st[:], now)
		}
	}
}

// takeEntry decides under the key's entry lock, inserting the entry under the
// shard's mutex when the key is new.
func (sh *shard) takeEntry(tag uint64, req *core.TakeRequest, now int64) (core.Decision, error) {
	limits := req.Limits
	var d core.Decision
	for {
		if s, ok := sh.entries.find(tag); ok {
			if e := s.val.Load(); e != nil {
				e.mu.Lock()
				if !e.dead {
					err := req.Decide(&d, e.states, now)
					e.freshAt.Store(req.FreshAt(e.states))
					e.mu.Unlock()
					return d, err
				}
				e.mu.Unlock()
			}
		}
		sh.mu.Lock()
		if _, ok := sh.entries.find(tag); ok {
			sh.mu.Unlock()
			continue
		}
		var scratch [8]core.State
		states := scratch[:min(len(limits), len(scratch))]
		if len(limits) > len(scratch) {
			states = make([]core.State, len(limits))
		}
		err := req.Decide(&d, states, now)
		if err == nil && d.Allowed && req.Cost > 0 {
			if !sh.makeRoom(false, now) {
				sh.mu.Unlock()
				return core.Decision{}, errFull
			}
			e := &entry{}
			if len(limits) == 1 {
				e.states = e.one[:]
			} else {
				e.states = make([]core.State, len(limits))
			}
			copy(e.states, states)
			e.freshAt.Store(req.FreshAt(e.states))
			sh.entries.grow()
			s := sh.entries.claim(tag)
			s.val.Store(e)
			sh.entries.publish(s, tag)
		}
		sh.mu.Unlock()
		return d, err
	}
}
