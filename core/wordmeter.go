package core

import "math/bits"

// WordMeter is a request that spends from a one-word meter (GCRA, token or
// leaky bucket under one limit, State.T alone), checked once: the hot path of
// a lock-free store, which loads the word, swaps in Advance's result and
// builds the decision with Decide on the word it loaded, without Take's
// checks on every call (TakeRequest.AdvanceWord and Decide make them each
// time). Get one from TakeRequest.WordMeter; a zero WordMeter decides
// nothing (Advance returns the word as it is, Decide writes a zero Decision).
type WordMeter struct {
	p     *params
	limit *Limit
	cost  int64
	alg   Algorithm
}

// WordMeter returns r as a WordMeter at now (µs since the epoch), and false
// when r is not the plain spend it covers: r was not built by a Limiter (or
// was changed since), its cost is not positive, it is a settle's charge, it
// has several limits or a penalty box, its algorithm keeps more than one
// word, or now is out of range. The store then takes the general path
// (WordUnit, AdvanceWord and Decide), which decides every request.
func (r *TakeRequest) WordMeter(now int64) (WordMeter, bool) {
	p := r.prepared()
	if p == nil || len(p.params) != 1 || !r.Algorithm.OneWord() || r.Cost <= 0 || r.Charge || r.BlockFor != 0 ||
		now < 0 || now > MaxTime {
		return WordMeter{}, false
	}
	return WordMeter{p: &p.params[0], limit: &r.Limits[0], cost: r.Cost, alg: r.Algorithm}, true
}

// Unit is the meter's emission interval (µs), as WordUnit returns it: a
// store keeps it beside the word, so that a word written under other figures
// is re-expressed (ReexpressWord) before it is spent from.
func (m *WordMeter) Unit() int64 {
	if m.p == nil {
		return 0
	}
	return m.p.interval
}

// Advance returns the word the request leaves at now, from the word t: t
// itself when the cost does not fit (a denial writes nothing), as
// AdvanceWord does.
func (m *WordMeter) Advance(t, now int64) int64 {
	if m.p == nil {
		return t
	}
	return advanceWord(m.p, t, m.cost, now)
}

// Decide writes into d the decision of the request at now on the word t it
// loaded (the one Advance's result replaced), as Decide does.
func (m *WordMeter) Decide(d *Decision, t, now int64) {
	if m.p == nil {
		*d = Decision{}
		return
	}
	s := State{T: t}
	meterInto(d, &s, m.p, m.cost, now, true, m.alg == LeakyBucket)
	d.Limit, d.Index = *m.limit, 0
	if m.p.debt != 0 {
		d.Debt = m.alg.debtOf(&s, m.p, now)
	}
}

// PackedWindow is a request that spends from a window packed in one word (a
// fixed or sliding window under one limit whose state packs, see
// WindowPacking), checked once, as WordMeter is for a meter: a lock-free
// store swaps in Advance's result and builds the decision with Decide on
// the word it loaded, as AdvanceWindowWord and DecideWindowWord do. Get one
// from TakeRequest.PackedWindow; a zero PackedWindow decides
// nothing, as a zero WordMeter.
type PackedWindow struct {
	p     *params
	limit *Limit
	pk    WindowPacking
	cost  int64
	alg   Algorithm
}

// PackedWindow returns r as a PackedWindow at now (µs since the epoch), and
// false when r is not the plain spend it covers (see WordMeter) or its
// state does not pack.
func (r *TakeRequest) PackedWindow(now int64) (PackedWindow, bool) {
	pl := r.prepared()
	if pl == nil || len(pl.params) != 1 || (r.Algorithm != FixedWindow && r.Algorithm != SlidingWindow) ||
		r.Limits[0].Calendar != 0 || r.Cost <= 0 || r.Charge || r.BlockFor != 0 || now < 0 || now > MaxTime {
		return PackedWindow{}, false
	}
	p := &pl.params[0]
	pk, ok := packingOf(p.period, bits.Len64(uint64(p.rate+p.debt)), r.Algorithm == SlidingWindow)
	if !ok {
		return PackedWindow{}, false
	}
	return PackedWindow{p: p, limit: &r.Limits[0], pk: pk, cost: r.Cost, alg: r.Algorithm}, true
}

// Packing is how the window's state packs, as WindowPacking returns it: a
// store keeps it beside the word, so that a word packed under other figures
// is re-expressed (ReexpressWindowWord) before it is spent from.
func (w *PackedWindow) Packing() WindowPacking { return w.pk }

// Advance returns the word the request leaves at now, from the word it
// loaded: word itself when the cost does not fit, or the word is negative
// (a store's sentinel).
func (w *PackedWindow) Advance(word, now int64) int64 {
	if w.p == nil || word < 0 {
		return word
	}
	return w.pk.advance(w.p, word, w.cost, now)
}

// Decide writes into d the decision of the request at now on the word it
// loaded (the one Advance's result replaced), as DecideWindowWord does.
func (w *PackedWindow) Decide(d *Decision, word, now int64) {
	if w.p == nil {
		*d = Decision{}
		return
	}
	s := w.pk.Unpack(word)
	*d = w.alg.decide(&s, w.p, w.cost, now, false)
	d.Limit, d.Index = *w.limit, 0
	if w.p.debt != 0 {
		d.Debt = w.alg.debtOf(&s, w.p, now)
	}
}
