package memory

import (
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// windowVal is a fixed or sliding window's state under one limit, packed in
// one word (core.WindowPacking) and updated with compare-and-swap as a
// meter's is, beside its packing: the limit's period and layout, which tell
// the sweeper when the word has recovered. The packing is written before the
// slot is published and read only under the shard's mutex; the word holds the
// same sentinels as a meter's (wordMoved, wordDeleted).
type windowVal struct {
	word atomic.Int64
	pk   core.WindowPacking
}

func moveWindow(from, to *windowVal) bool {
	to.pk = from.pk
	return moveWord(&from.word, &to.word)
}

func killWindow(v *windowVal, now int64, force bool) bool {
	for {
		w := v.word.Load()
		if !force && v.pk.FreshAt(w) > now {
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
	for {
		if s, ok := sh.windows.find(tag); ok {
			v, err := applyWindow(d, &s.val.word, req, now)
			if v != wordDeleted {
				if v == wordMoved {
					continue
				}
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
// instead of deciding.
func applyWindow(d *core.Decision, w *atomic.Int64, req *core.TakeRequest, now int64) (int64, error) {
	for {
		v := w.Load()
		if v < 0 {
			return v, nil
		}
		if next := req.AdvanceWindowWord(v, now); next == v || w.CompareAndSwap(v, next) {
			return 0, req.DecideWindowWord(d, v, now)
		}
	}
}

// insertWindow decides a request for a key the shard does not hold, on a
// fresh state, and inserts its word when the request left one (an admitted
// spend). The caller holds the shard's mutex.
func (sh *shard) insertWindow(d *core.Decision, tag uint64, req *core.TakeRequest, pk core.WindowPacking, now int64) error {
	if err := req.DecideWindowWord(d, 0, now); err != nil {
		return err
	}
	next := req.AdvanceWindowWord(0, now)
	if next == 0 {
		return nil
	}
	if !sh.makeRoom(windowTable, now) {
		*d = core.Decision{}
		return errFull
	}
	sh.windows.grow()
	s := sh.windows.claim(tag)
	s.val.pk = pk
	s.val.word.Store(next)
	sh.windows.publish(s, tag)
	return nil
}
