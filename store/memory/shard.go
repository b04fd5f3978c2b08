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
	free    []*entry      // killed entries kept for new keys, under mu
	seen    *atomic.Int64 // the store's latest request time seen by an insert
	_       [64]byte      // keep neighbouring shards' mutexes off one cache line
}

func (sh *shard) init(bound int, seen *atomic.Int64, refuse bool) {
	maxCap := tableCap(bound)
	sh.bound, sh.seen, sh.refuse = bound, seen, refuse
	sh.words.init(maxCap, valueOps[atomic.Int64]{move: moveWord, kill: killWord})
	sh.entries.init(maxCap, valueOps[atomic.Pointer[entry]]{move: moveEntry, kill: sh.killEntry})
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
