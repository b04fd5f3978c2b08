package core

import (
	"fmt"
	"math/bits"
)

// Window words, for stores: the fixed window's state under one limit (its
// window's start T and count N) and, for most limits, the sliding window's
// (T, N and the previous window's count P) fit in one non-negative 64-bit
// word, so a store can keep it inline and update it with compare-and-swap,
// as it keeps a meter's T (TakeRequest.AdvanceWord):
//
//	fixed window:    word = I<<b | N
//	sliding window:  word = (I<<b | N)<<b | P
//
// with I = T / Period the window's index and b the bits Rate takes. The
// packing is exact: every state a window algorithm can reach has T a whole
// number of Periods, at most MaxTime (no request is decided later), and counts
// from 0 to Rate (an admission never takes a count past Rate, a refund never
// below 0), and a limit packs only when those ranges fit in 63 bits. The zero
// word is a fresh state. Beside the word, a store keeps the WindowPacking (a
// 64-bit value fixed for the key), which tells when the word has recovered
// without the limit.

// WindowPacking is how one limit's fixed or sliding window state packs into
// a word: the limit's Period, the bits of one count, and which algorithm. The
// fixed window always packs; the sliding window packs when its two counts and
// the window index fit in 63 bits: up to 32,767 per second, 262,143 per
// minute, 2,097,151 per hour, 8,388,607 per day. A store keeps any other
// state as a State.
type WindowPacking uint64

const (
	packCountBits   = 63     // the bits of one count: the packing's low six bits
	packSliding     = 1 << 7 // set for the sliding window
	packPeriodShift = 8      // the Period, in µs, above
)

// errNoWindowWord is what DecideWindowWord returns for a request whose state
// does not pack.
var errNoWindowWord = fmt.Errorf("%w: no window word: only a fixed or sliding window under one limit that packs (see TakeRequest.WindowPacking) has one", ErrInvalidLimit)

// WindowPacking returns how r's state packs into a word, and false when it
// does not: r is not a fixed or sliding window under exactly one valid
// limit, or its sliding window's counts are too large (see WindowPacking).
// Requests of one algorithm and limit always get the same answer.
func (r *TakeRequest) WindowPacking() (WindowPacking, bool) {
	var buf params
	_, pk, ok := r.windowPlan(&buf)
	return pk, ok
}

// windowPlan returns r's figures (the Limiter's, or computed into buf) and
// packing, and false when r's state does not pack.
func (r *TakeRequest) windowPlan(buf *params) (*params, WindowPacking, bool) {
	if len(r.Limits) != 1 || r.Algorithm != FixedWindow && r.Algorithm != SlidingWindow || r.Limits[0].Calendar != 0 {
		return nil, 0, false // a calendar's windows are no whole number of Periods
	}
	p := buf
	if pl := r.prepared(); pl != nil {
		p = &pl.params[0]
	} else {
		var err error
		if *buf, err = computeParams(r.Limits[0]); err != nil {
			return nil, 0, false
		}
		buf.setDebt(r.Algorithm, max(0, r.MaxDebt))
	}
	// A debt bound (settle.go) takes counts above Rate.
	pk, ok := packingOf(p.period, bits.Len64(uint64(p.rate+p.debt)), r.Algorithm == SlidingWindow)
	return p, pk, ok
}

// packingOf is the packing of a period (µs) with counts of b bits, and
// whether it fits: every window index up to MaxTime/period must fit in the
// bits the counts leave, floor(MaxTime/period) < 2^(63-counts), that is
// MaxTime >> (63-counts) < period.
func packingOf(period int64, b int, sliding bool) (WindowPacking, bool) {
	counts := b
	if sliding {
		counts = 2 * b
	}
	if b < 1 || counts > 62 || period < 1 || period > MaxPeriod.Microseconds() || MaxTime>>(63-counts) >= period {
		return 0, false
	}
	pk := WindowPacking(uint64(period)<<packPeriodShift | uint64(b))
	if sliding {
		pk |= packSliding
	}
	return pk, true
}

func (pk WindowPacking) period() int64   { return int64(pk >> packPeriodShift) }
func (pk WindowPacking) countBits() uint { return uint(pk & packCountBits) }
func (pk WindowPacking) sliding() bool   { return pk&packSliding != 0 }

// valid reports whether pk is a packing WindowPacking could return.
func (pk WindowPacking) valid() bool {
	q, ok := packingOf(pk.period(), int(pk.countBits()), pk.sliding())
	return ok && q == pk
}

// fields splits a packed word into the window index i, its count n and the
// previous window's count prev (0 for the fixed window).
func (pk WindowPacking) fields(word int64) (i, n, prev int64) {
	b := pk.countBits()
	mask := int64(1)<<b - 1
	if pk.sliding() {
		prev = word & mask
		word >>= b
	}
	return word >> b, word & mask, prev
}

// join packs fields that fit.
func (pk WindowPacking) join(i, n, prev int64) int64 {
	b := pk.countBits()
	word := i<<b | n
	if pk.sliding() {
		word = word<<b | prev
	}
	return word
}

// Unpack returns the State a packed word holds. A negative word (no packing
// makes one; stores use them as markers) unpacks to the zero State, as does
// any word under the zero WindowPacking.
func (pk WindowPacking) Unpack(word int64) State {
	if word < 0 {
		return State{}
	}
	i, n, prev := pk.fields(word)
	return State{T: i * pk.period(), N: n, P: prev}
}

// Pack returns s packed into a word, and false when pk is not a packing
// WindowPacking returns or s is no state of its limit's window: T not a whole
// number of Periods from 0 to MaxTime, a count outside what the packing
// holds, a previous count under the fixed window, or a log.
func (pk WindowPacking) Pack(s State) (int64, bool) {
	if !pk.valid() {
		return 0, false
	}
	period, top := pk.period(), int64(1)<<pk.countBits()
	switch {
	case s.T < 0 || s.T > MaxTime || s.T%period != 0,
		s.N < 0 || s.N >= top || s.P < 0 || s.P >= top,
		!pk.sliding() && s.P != 0,
		len(s.Log) != 0 || s.Head != 0:
		return 0, false
	}
	return pk.join(s.T/period, s.N, s.P), true
}

// FreshAt returns the instant (µs since the epoch) from which a packed word's
// state decides as a fresh one would, so a store may drop it; 0 when it is
// fresh. It equals TakeRequest.FreshAt of the unpacked State.
func (pk WindowPacking) FreshAt(word int64) int64 {
	if word < 0 {
		return 0
	}
	i, n, prev := pk.fields(word)
	switch {
	case n == 0 && prev == 0:
		return 0
	case pk.sliding():
		return (i + 2) * pk.period()
	}
	return (i + 1) * pk.period()
}

// AdvanceWindowWord returns the packed state r, a spend or a refund, leaves
// at now, from the packed state word: for a lock-free store to swap in, before
// it builds the Decision with DecideWindowWord on the word it loaded. It
// returns word itself when r changes nothing (a peek, a denial, an invalid
// request) or r's state does not pack. A spend takes no division while now
// is in the word's window.
func (r *TakeRequest) AdvanceWindowWord(word, now int64) int64 {
	var buf params
	p, pk, ok := r.windowPlan(&buf)
	switch {
	case !ok || word < 0 || r.Cost == 0:
		return word
	case r.Cost < 0 || r.Charge:
		return r.refundWindowWord(pk, word, now)
	case now < 0 || now > MaxTime:
		return word
	}
	return pk.advance(p, word, r.Cost, now)
}

// advance is the word a valid spend of cost leaves at now: rebase, then the
// commit of fixedWindow or slidingWindow, on the packed fields.
func (pk WindowPacking) advance(p *params, word, cost, now int64) int64 {
	i, n, prev := pk.fields(word)
	cur := windowIndex(p, i, now)
	if i > cur { // a window after now's (the clock stepped back): rebase
		i = cur
		word = pk.join(i, n, prev)
	}
	if cost > p.rate {
		return word
	}
	if !pk.sliding() {
		if i != cur {
			n = 0
		}
		if n+cost <= p.rate {
			return pk.join(cur, n+cost, 0)
		}
		return word
	}
	var c, pv int64
	switch i {
	case cur:
		c, pv = n, prev
	case cur - 1:
		pv = n
	}
	if swEstimate(pv, c+cost, now-cur*p.period, p.period) <= float64(p.rate) {
		return pk.join(cur, c+cost, pv)
	}
	return word
}

// windowIndex is the index of the window holding now, found without a
// division when it is i.
func windowIndex(p *params, i, now int64) int64 {
	if e := now - i*p.period; e >= 0 && e < p.period {
		return i
	}
	return now / p.period
}

// refundWindowWord is AdvanceWindowWord for a refund or a settle's charge:
// the refund rules (see refund.go) or the charge (settle.go) applied to the
// unpacked state, packed again.
func (r *TakeRequest) refundWindowWord(pk WindowPacking, word, now int64) int64 {
	st := [1]State{pk.Unpack(word)}
	var d Decision
	if r.Decide(&d, st[:], now) != nil {
		return word
	}
	if next, ok := pk.Pack(st[0]); ok {
		return next
	}
	return word
}

// DecideWindowWord decides r on the packed state word at now, into d, as
// Decide does on the unpacked State: a lock-free store calls it on the word
// it replaced with AdvanceWindowWord's. It returns an error wrapping
// ErrInvalidLimit when r's state does not pack, and Decide's errors.
func (r *TakeRequest) DecideWindowWord(d *Decision, word, now int64) error {
	var buf params
	p, pk, ok := r.windowPlan(&buf)
	if !ok {
		return errNoWindowWord
	}
	if r.Cost < 0 || r.Charge || now < 0 || now > MaxTime {
		st := [1]State{pk.Unpack(word)}
		return r.Decide(d, st[:], now) // a refund, a charge, or Decide's error
	}
	// applyPrepared's decision, without its rebase: the rebase is what the
	// spend writes (AdvanceWindowWord's), and decide reads a window after
	// now's as now's (viewT), so it changes no decision.
	s := pk.Unpack(word)
	*d = r.Algorithm.decide(&s, p, r.Cost, now, false)
	d.Limit, d.Index = r.Limits[0], 0
	if p.debt != 0 {
		d.Debt = r.Algorithm.debtOf(&s, p, now)
	}
	return nil
}
