package memory

import "github.com/ratewarden/ratewarden/core"

// The penalty box (core.WithBlockFor) lives in the key's entry: a request
// with a BlockFor always takes the entry path, whatever its algorithm and
// number of limits, and the entry keeps the block's end in one more State
// past its states' length (so an entry of a rate-only key stays the size it
// was), under the entry's mutex, so the block and the rate are decided in one
// step. A key's entry outlives its block (freshAtOf), so neither the sweeper
// nor an eviction that prefers recovered keys lifts a running block early;
// memory stays bounded by the key bound, as for any key. Requests without a
// BlockFor (every rate-only limiter) take their own paths, unchanged.

// newEntryFor is newEntry for req's limits, with room for the block's end
// when req has a penalty box. The caller holds the shard's mutex.
func (sh *shard) newEntryFor(req *core.TakeRequest) *entry {
	n := len(req.Limits)
	e := sh.newEntry(n)
	e.blocking = false
	if req.BlockFor != 0 {
		e.makeBlocking()
	}
	return e
}

// makeBlocking gives e room for a block's end, none running. The caller
// holds e's mutex, or owns e (not yet published).
func (e *entry) makeBlocking() {
	n := len(e.states)
	if cap(e.states) <= n || &e.states[:1][0] == &e.one[0] {
		e.states = append(make([]core.State, 0, n+1), e.states...)
	}
	e.states[:n+1][n] = core.State{}
	e.blocking = true
}

// until is the block's end of a blocking entry.
func (e *entry) until() *int64 { return &e.states[:len(e.states)+1][len(e.states)].T }

// decide decides req on e's states, with e's penalty box when req has one.
// The caller holds e's mutex, or owns e (not yet published).
func (e *entry) decide(d *core.Decision, req *core.TakeRequest, now int64) error {
	if req.BlockFor == 0 {
		return req.Decide(d, e.states, now)
	}
	if !e.blocking { // a key that a limiter without a block wrote
		e.makeBlocking()
	}
	return req.DecideBlocking(d, e.states, e.until(), now)
}

// freshAtOf is the instant from which e may be dropped: when its states have
// recovered and its block, if any, has ended.
func (e *entry) freshAtOf(req *core.TakeRequest) int64 {
	at := req.FreshAt(e.states)
	if e.blocking {
		at = max(at, *e.until())
	}
	return at
}

// takeOverWord removes tag's one-word meter, if the shard holds one, and
// returns its state re-expressed under req's one limit: a limiter given a
// penalty box (a rules reload that adds block_for) carries on from what the
// key used, instead of a fresh quota. The caller holds the shard's mutex.
func (sh *shard) takeOverWord(tag uint64, req *core.TakeRequest, now int64) (int64, bool) {
	if sh.words.live == 0 || !req.Algorithm.OneWord() {
		return 0, false
	}
	s, ok := sh.words.find(tag)
	if !ok {
		return 0, false
	}
	for {
		v := s.val.word.Load()
		if v < 0 { // deleted; moved or busy only under the mutex the caller holds
			return 0, false
		}
		if s.val.word.CompareAndSwap(v, wordDeleted) {
			unit := s.val.unit.Load()
			sh.words.remove(s, 0, true)
			return req.ReexpressWord(v, unit, now), true
		}
	}
}

// takeOverMeterEntry removes tag's entry, if the shard holds one of one
// meter state, and returns that state re-expressed under req: a limiter
// whose penalty box was taken away (a rules reload that drops block_for)
// carries on from what the key used; the block goes with the entry. The
// caller holds the shard's mutex.
func (sh *shard) takeOverMeterEntry(tag uint64, req *core.TakeRequest, now int64) int64 {
	if sh.entries.live == 0 {
		return 0
	}
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
	st := [1]core.State{{T: e.states[0].T}}
	from := e.oneLimit
	req.Reexpress(st[:], from[:], now)
	return st[0].T
}
