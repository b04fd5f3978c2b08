package memory

import (
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// windowVal is a fixed or sliding window's state under one limit, packed in
// one word (core.WindowPacking) and updated with compare-and-swap as a
// meter's is, beside its packing: the limit's period and layout, which tell
// the sweeper when the word has recovered, and an edited limit that the word
// was written under other figures (core.TakeRequest.ReexpressWindowWord).
// The packing changes only under the shard's mutex, while the word holds
// wordBusy; the word holds the same sentinels as a meter's.
type windowVal struct {
	word atomic.Int64
	pk   atomic.Uint64 // a core.WindowPacking
}

func (v *windowVal) packing() core.WindowPacking { return core.WindowPacking(v.pk.Load()) }

func moveWindow(from, to *windowVal) bool {
	to.pk.Store(from.pk.Load())
	return moveWord(&from.word, &to.word)
}

func killWindow(v *windowVal, now int64, force bool) bool {
	for {
		w := v.word.Load()
		if !force && v.packing().FreshAt(w) > now {
			return false
		}
		if v.word.CompareAndSwap(w, wordDeleted) {
			return true
		}
	}
}

// takeWindow decides a window under one limit whose state packs as pk into
// d: a lock-free compare-and-swap on the key's word, or, for a key not held,
// an insert under the shard's mutex.
func (sh *shard) takeWindow(d *core.Decision, tag uint64, req *core.TakeRequest, pk core.WindowPacking, now int64) error {
	if pw, ok := req.PackedWindow(now); ok { // a plain spend of a key held: checked once
		if s, ok := sh.windows.find(tag); ok && spendWindow(d, &s.val, &pw, now) == 0 {
			return nil
		}
	}
	for {
		if s, ok := sh.windows.find(tag); ok {
			v, err := applyWindow(d, &s.val, req, pk, now)
			switch v {
			case wordMoved:
				continue
			case wordBusy:
				sh.mu.Lock() // the re-expression holds it
				sh.mu.Unlock()
				continue
			case wordStale:
				sh.reexpressWindow(tag, req, pk, now)
				continue
			case wordDeleted:
			default:
				return err
			}
		}
		sh.mu.Lock()
		if _, ok := sh.windows.find(tag); ok {
			sh.mu.Unlock()
			continue
		}
		err := sh.insertWindow(d, tag, req, pk, now)
		sh.mu.Unlock()
		return err
	}
}

// applyWindow runs the window on its packed word with compare-and-swap, as
// applyWord runs a meter: only the next word is computed between the load
// and the swap (core.TakeRequest.AdvanceWindowWord, which divides nothing
// while now is in the word's window), and the decision is built afterwards
// from the word the swap replaced. It returns the sentinel it met, if any,
// instead of deciding, and wordStale for a word packed as another limit
// packs (see applyWord).
func applyWindow(d *core.Decision, wv *windowVal, req *core.TakeRequest, pk core.WindowPacking, now int64) (int64, error) {
	w := &wv.word
	for {
		v := w.Load()
		if v < 0 {
			return v, nil
		}
		if wv.packing() != pk {
			return wordStale, nil
		}
		next := req.AdvanceWindowWord(v, now)
		if next == v && w.Load() != v {
			continue // the word changed, perhaps re-expressed, after it was read
		}
		if next == v || w.CompareAndSwap(v, next) {
			return 0, req.DecideWindowWord(d, v, now)
		}
	}
}

// spendWindow is applyWindow for a PackedWindow, the plain spend: it
// returns 0 once it has decided into d, else the sentinel it met (or
// wordStale), for takeWindow's general path to handle.
func spendWindow(d *core.Decision, wv *windowVal, pw *core.PackedWindow, now int64) int64 {
	w := &wv.word
	for {
		v := w.Load()
		if v < 0 {
			return v
		}
		if wv.packing() != pw.Packing() {
			return wordStale
		}
		next := pw.Advance(v, now)
		if next == v && w.Load() != v {
			continue // the word changed, perhaps re-expressed, after it was read
		}
		if next == v || w.CompareAndSwap(v, next) {
			pw.Decide(d, v, now)
			return 0
		}
	}
}

// reexpressWindow rewrites tag's word, packed as another limit packs, as
// req's limit packs it (see reexpressWord).
func (sh *shard) reexpressWindow(tag uint64, req *core.TakeRequest, pk core.WindowPacking, now int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.windows.find(tag)
	if !ok {
		return
	}
	for {
		v := s.val.word.Load()
		from := s.val.packing()
		if v < 0 || from == pk {
			return
		}
		if s.val.word.CompareAndSwap(v, wordBusy) {
			next := req.ReexpressWindowWord(v, from, now)
			s.val.pk.Store(uint64(pk))
			s.val.word.Store(next)
			return
		}
	}
}

// insertWindow decides a request for a key the shard does not hold, on a
// fresh state, and inserts its word when the request left one (an admitted
// spend). The caller holds the shard's mutex.
func (sh *shard) insertWindow(d *core.Decision, tag uint64, req *core.TakeRequest, pk core.WindowPacking, now int64) error {
	// A window edited to a limit whose counts pack again brings them along
	// from its entry.
	word := sh.takeOverEntry(tag, req, pk, now)
	if err := req.DecideWindowWord(d, word, now); err != nil {
		return err
	}
	next := req.AdvanceWindowWord(word, now)
	if next == 0 || pk.FreshAt(next) == 0 {
		return nil
	}
	if !sh.makeRoom(windowTable, now) {
		*d = core.Decision{}
		return errFull
	}
	sh.windows.grow()
	s := sh.windows.claim(tag)
	s.val.pk.Store(uint64(pk))
	s.val.word.Store(next)
	sh.windows.publish(s, tag)
	return nil
}

// takeOverWindow removes tag's packed window, if the shard holds one, and
// returns its word and packing. The caller holds the shard's mutex.
func (sh *shard) takeOverWindow(tag uint64) (int64, core.WindowPacking, bool) {
	s, ok := sh.windows.find(tag)
	if !ok {
		return 0, 0, false
	}
	for {
		v := s.val.word.Load()
		if v < 0 { // deleted; moved or busy only under the mutex the caller holds
			return 0, 0, false
		}
		if s.val.word.CompareAndSwap(v, wordDeleted) {
			pk := s.val.packing()
			sh.windows.remove(s, 0, true)
			return v, pk, true
		}
	}
}

// takeOverEntry removes tag's entry, if the shard holds one of one state,
// and returns that state re-expressed under req and packed as pk (0 when it
// does not pack). The caller holds the shard's mutex.
func (sh *shard) takeOverEntry(tag uint64, req *core.TakeRequest, pk core.WindowPacking, now int64) int64 {
	s, ok := sh.entries.find(tag)
	if !ok {
		return 0
	}
	e := s.val.Load()
	if e == nil || len(e.states) != 1 || !sh.entries.remove(s, 0, true) {
		return 0
	}
	// Killed: no writer decides on it any more, and it is not reused before
	// the caller releases the shard's mutex.
	st := [1]core.State{e.states[0]}
	from := e.oneLimit
	req.Reexpress(st[:], from[:], now)
	word, ok := pk.Pack(st[0])
	if !ok {
		return 0
	}
	return word
}
