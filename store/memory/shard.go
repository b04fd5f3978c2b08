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

// shard is one lock domain: a mutex for inserts and removals, and the three
// tables it guards (meters' words, packed windows, entries). Lookups and
// updates of existing keys take no shard lock.
type shard struct {
	mu      sync.Mutex
	words   index[atomic.Int64]
	windows index[windowVal]
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
	sh.windows.init(maxCap, valueOps[windowVal]{move: moveWindow, kill: killWindow})
	sh.entries.init(maxCap, valueOps[atomic.Pointer[entry]]{move: moveEntry, kill: sh.killEntry})
}

// keys returns the number of keys the shard holds. The caller holds its
// mutex.
func (sh *shard) keys() int { return sh.words.live + sh.windows.live + sh.entries.live }

// keyTable is what making room needs of each of a shard's tables.
type keyTable interface {
	liveKeys() int
	evict(now int64) bool
	reclaim(now int64, budget int) bool
}

// tableKind names the table a new key goes to.
type tableKind int

const (
	wordTable tableKind = iota
	windowTable
	entryTable
)

// roomOrder lists the shard's tables in the order a new key for table own
// takes room from them: own first while it holds a key, then the others.
func (sh *shard) roomOrder(own tableKind) [3]keyTable {
	all := [3]keyTable{&sh.words, &sh.windows, &sh.entries}
	if all[own].liveKeys() > 0 {
		all[0], all[own] = all[own], all[0]
	}
	return all
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
// key when the shard is at its bound, preferring the table own, which the new
// key goes to: it evicts one key, or, when the shard refuses new keys,
// reclaims a recovered state found within reclaimBudget slots of a table. It
// reports whether there is room.
func (sh *shard) makeRoom(own tableKind, now int64) bool {
	for v := sh.seen.Load(); now > v && !sh.seen.CompareAndSwap(v, now); v = sh.seen.Load() {
	}
	if sh.keys() < sh.bound {
		return true
	}
	order := sh.roomOrder(own)
	if sh.refuse {
		for _, t := range order {
			if t.liveKeys() > 0 && t.reclaim(now, reclaimBudget) {
				return true
			}
		}
		sh.refused++
		return false
	}
	for _, t := range order {
		if t.liveKeys() > 0 {
			if t.evict(now) {
				sh.evicted++
			}
			return true
		}
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
			if !sh.makeRoom(wordTable, now) {
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
