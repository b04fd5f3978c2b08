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
	wordBusy    int64 = -3 // being re-expressed under the shard's mutex: wait for it
	wordStale   int64 = -4 // never stored: written under other figures (see reexpressWord)
)

// meterVal is a meter's state under one limit, one word updated with
// compare-and-swap, beside the emission interval it was written under
// (core.TakeRequest.WordUnit), so an edited limit finds it and re-expresses
// it (core.TakeRequest.ReexpressWord). The unit changes only under the
// shard's mutex, while the word holds wordBusy.
type meterVal struct {
	word atomic.Int64
	unit atomic.Int64
}

// shard is one lock domain: a mutex for inserts and removals, and the three
// tables it guards (meters' words, packed windows, entries). Lookups and
// updates of existing keys take no shard lock.
type shard struct {
	mu      sync.Mutex
	words   index[meterVal]
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
	sh.words.init(maxCap, valueOps[meterVal]{move: moveMeter, kill: killMeter})
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

func moveMeter(from, to *meterVal) bool {
	to.unit.Store(from.unit.Load())
	return moveWord(&from.word, &to.word)
}

func killMeter(v *meterVal, now int64, force bool) bool { return killWord(&v.word, now, force) }

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
// the shard's mutex. A word written under other figures is re-expressed
// first, under the shard's mutex.
func (sh *shard) takeWord(d *core.Decision, tag uint64, req *core.TakeRequest, now int64) error {
	if wm, ok := req.WordMeter(now); ok { // a plain spend of a key held: checked once
		if s, ok := sh.words.find(tag); ok && spendWord(d, &s.val, &wm, now) == 0 {
			return nil
		}
	}
	unit := req.WordUnit()
	for {
		if s, ok := sh.words.find(tag); ok {
			v, err := applyWord(d, &s.val, req, unit, now)
			switch v {
			case wordMoved:
				continue
			case wordBusy:
				sh.mu.Lock() // the re-expression holds it
				sh.mu.Unlock()
				continue
			case wordStale:
				sh.reexpressWord(tag, req, unit, now)
				continue
			case wordDeleted:
			default:
				return err
			}
		}
		sh.mu.Lock()
		if _, ok := sh.words.find(tag); ok {
			sh.mu.Unlock()
			continue
		}
		var st [1]core.State
		st[0].T = sh.takeOverMeterEntry(tag, req, now) // a penalty box's entry, if any
		err := req.Decide(d, st[:], now)
		if err == nil && st[0].T != 0 {
			if !sh.makeRoom(wordTable, now) {
				sh.mu.Unlock()
				*d = core.Decision{}
				return errFull
			}
			sh.words.grow()
			s := sh.words.claim(tag)
			s.val.unit.Store(unit)
			s.val.word.Store(st[0].T)
			sh.words.publish(s, tag)
		}
		sh.mu.Unlock()
		return err
	}
}

// reexpressWord rewrites tag's word, written under another emission
// interval, under req's: it parks the word at wordBusy, so no lock-free
// writer swaps in a state computed under either interval meanwhile, and
// stores the unit before the word it goes with.
func (sh *shard) reexpressWord(tag uint64, req *core.TakeRequest, unit, now int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.words.find(tag)
	if !ok {
		return
	}
	for {
		v := s.val.word.Load()
		from := s.val.unit.Load()
		if v < 0 || from == unit {
			return
		}
		if s.val.word.CompareAndSwap(v, wordBusy) {
			next := req.ReexpressWord(v, from, now)
			s.val.unit.Store(unit)
			s.val.word.Store(next)
			return
		}
	}
}

// spendWord is applyWord for a WordMeter, the plain spend: it returns 0
// once it has decided into d, else the sentinel it met (or wordStale), for
// takeWord's general path to handle.
func spendWord(d *core.Decision, m *meterVal, wm *core.WordMeter, now int64) int64 {
	unit := wm.Unit()
	for {
		v := m.word.Load()
		if v < 0 {
			return v
		}
		if m.unit.Load() != unit {
			return wordStale
		}
		next := wm.Advance(v, now)
		if next == v && m.word.Load() != v {
			continue // the word changed, perhaps re-expressed, after it was read
		}
		if next == v || m.word.CompareAndSwap(v, next) {
			wm.Decide(d, v, now)
			return 0
		}
	}
}

// applyWord runs the algorithm on a one-word state with compare-and-swap. It
// returns the sentinel it met, if any, instead of deciding, and wordStale
// for a word written under another unit. Only the next state is computed
// between the load and the swap, so the window in which another core can
// steal the word is a few instructions; the decision is built afterwards
// from the state the swap replaced. The unit is read after the word: a
// re-expression that changed it also changed the word (ReexpressWord never
// leaves it as it was), so the swap of a word read before fails.
func applyWord(d *core.Decision, m *meterVal, req *core.TakeRequest, unit, now int64) (int64, error) {
	for {
		v := m.word.Load()
		if v < 0 {
			return v, nil
		}
		if u := m.unit.Load(); u != unit && unit != 0 { // 0: invalid figures, which Decide refuses
			return wordStale, nil
		}
		next := req.AdvanceWord(v, now)
		if next == v && m.word.Load() != v {
			continue // the word changed, perhaps re-expressed, after it was read
		}
		if next == v || m.word.CompareAndSwap(v, next) {
			st := [1]core.State{{T: v}}
			return 0, req.Decide(d, st[:], now)
		}
	}
}
