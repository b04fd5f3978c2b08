package core

import (
	"math"
	"math/bits"
)

// What an edit of a limit keeps. A store keys a client's state by its
// namespace, key, algorithm and number of limits (TakeRequest.Identity), not
// by the limits' figures, so a limit whose rate, period or burst is edited
// finds the state written under the old figures. Before it decides, the store
// re-expresses that state under the new figures (TakeRequest.Reexpress, or
// the one-word forms below), so what the client used stays used:
//
//   - A meter (token bucket, leaky bucket, GCRA) keeps the requests it owes:
//     the time it owes, T - now, is (T - now) / old interval requests, which
//     owe that many new intervals (rounded up, see reexpressMeter), and
//     never more than the new
//     burst's worth (tau): no quota is minted, and no key is locked beyond
//     what a fresh key at the new limit could reach. An edit of the burst
//     alone changes nothing but that cap, which a spend applies as it
//     applies a clock step's (see Algorithm): the next spend finds the key
//     owing at most the new burst.
//   - A window (fixed, sliding) whose period did not change keeps its counts.
//     A count the new rate can never reach again in its window, at least
//     2^k where 2^(k-1) <= new rate < 2^k (between the rate and twice it),
//     is cut to the new rate: the window is full. Counts above the new rate
//     otherwise stay, and deny until they have passed.
//   - A window whose period changed carries what the client used into the
//     window of the new period that holds now: the fixed window's count if
//     its window holds now, the sliding window's estimate at now (rounded
//     up) as its current count, with no previous count.
//   - The sliding log keeps its timestamps: it is the same log under any
//     limit.
//
// An algorithm changed, or a number of limits changed, is another identity:
// that state starts afresh.
//
// What a cut takes off is not given back: a key re-expressed under a smaller
// limit and then under the larger one again keeps only what the smaller one
// could hold. So while two figures are in force at once (a reload that
// reaches one instance before another), a key over the smaller limit can be
// admitted up to the requests it sends in that time, and no more once every
// instance applies the same figures.

// Identity hashes what a store keys r's state by beside its namespace and
// key: its algorithm and its number of limits, not their figures, so an edit
// of a limit finds the state its old figures wrote (see Reexpress). It is
// stable within a process only.
func (r *TakeRequest) Identity() uint64 {
	return mix64(uint64(r.Algorithm+1)*0x9e3779b97f4a7c15 ^ uint64(len(r.Limits)))
}

// SameFigures reports whether the limits a and b have the same rate, period
// and effective burst, one by one (names aside): states written under one
// decide under the other as they are, with no Reexpress.
func SameFigures(a, b []Limit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Rate != b[i].Rate || a[i].Period != b[i].Period || a[i].burst() != b[i].burst() ||
			a[i].Calendar != b[i].Calendar || a[i].Zone != b[i].Zone || a[i].AnchorDay != b[i].AnchorDay {
			return false
		}
	}
	return true
}

// Reexpress rewrites states, written under the limits from (states[i] under
// from[i]), as r's limits read them at now (µs since the epoch): what the
// client used stays used (see the top of this file). States of limits whose
// figures are invalid, old or new, are left as they are; Decide reports the
// new ones.
func (r *TakeRequest) Reexpress(states []State, from []Limit, now int64) {
	for i := range min(len(states), len(from), len(r.Limits)) {
		old, err := computeParams(from[i])
		if err != nil {
			continue
		}
		p, err := computeParams(r.Limits[i])
		if err != nil {
			continue
		}
		r.Algorithm.reexpress(&states[i], &old, &p, now)
	}
}

func (a Algorithm) reexpress(s *State, old, p *params, now int64) {
	switch a {
	case FixedWindow, SlidingWindow:
		reexpressWindow(a, s, old, p, now)
	case SlidingLog:
	default:
		s.T = reexpressMeter(s.T, old.interval, p, now)
	}
}

// WordUnit returns what a one-word meter state's meaning depends on, for a
// store to keep beside the word: the emission interval (µs) of r's one
// limit, or 0 when r is not a valid one-word meter under one limit.
func (r *TakeRequest) WordUnit() int64 {
	if len(r.Limits) != 1 || !r.Algorithm.OneWord() {
		return 0
	}
	if p := r.prepared(); p != nil {
		return p.params[0].interval
	}
	p, err := computeParams(r.Limits[0])
	if err != nil {
		return 0
	}
	return p.interval
}

// ReexpressWord returns the one-word meter state t, written under a limit of
// emission interval unit (WordUnit's), as r's one limit reads it at now. It
// never returns t itself when unit is not r's, so a store that swaps the
// result in can tell, by value, a word written before from one written
// after. It returns t when r is not a one-word meter under one valid limit.
func (r *TakeRequest) ReexpressWord(t, unit, now int64) int64 {
	p, err := r.onlyParams()
	if err != nil || !r.Algorithm.OneWord() || unit == p.interval || unit <= 0 {
		return t
	}
	next := reexpressMeter(t, unit, &p, now)
	if next == t && t > 0 {
		next = t - 1 // an empty meter either way; but another word
	}
	return next
}

// ReexpressWindowWord returns the packed window word, written under the
// packing from, as r's one limit packs and reads it at now, and 0 (a fresh
// state) when it cannot be packed. It returns word when from is r's packing,
// or r's state does not pack.
func (r *TakeRequest) ReexpressWindowWord(word int64, from WindowPacking, now int64) int64 {
	var buf params
	p, pk, ok := r.windowPlan(&buf)
	if !ok || from == pk || word < 0 || !from.valid() || from.sliding() != pk.sliding() {
		return word
	}
	s := from.Unpack(word)
	reexpressWindow(r.Algorithm, &s, &params{period: from.period()}, p, now)
	next, ok := pk.Pack(s)
	if !ok {
		next = 0
	}
	return next
}

// onlyParams returns the figures of r's one limit.
func (r *TakeRequest) onlyParams() (params, error) {
	if len(r.Limits) != 1 {
		return params{}, ErrInvalidLimit
	}
	if p := r.prepared(); p != nil {
		return p.params[0], nil
	}
	return computeParams(r.Limits[0])
}

// reexpressMeter maps a meter's T, written at an emission interval of old
// µs, to the interval of p: the time owed at now scaled by the ratio of the
// intervals, at most tau. The whole intervals owed scale exactly; the rest,
// r < old µs, scales in float64, rounded up and one µs more, so an edit never
// mints quota, and the Lua scripts, whose numbers are doubles, compute the
// same value with the same operations.
func reexpressMeter(t, old int64, p *params, now int64) int64 {
	if t <= now || old == p.interval || old <= 0 {
		return t
	}
	owed := t - now
	q, r := owed/old, owed%old
	if q > p.tau/p.interval {
		return now + p.tau
	}
	x := q * p.interval
	if r > 0 {
		x += int64(math.Ceil(float64(float64(r)*float64(p.interval))/float64(old))) + 1
	}
	return now + min(x, p.tau)
}

// reexpressWindow maps a window's state, written under the figures old,
// to the figures of p at now. A state written under a calendar is carried
// by reexpressCalendar.
func reexpressWindow(a Algorithm, s *State, old, p *params, now int64) {
	switch {
	case old.cal != nil:
		reexpressCalendar(s, old, p, now)
	case (old.period != p.period || p.cal != nil) && old.period > 0:
		used := windowUsage(a, s, old.period, now)
		*s = State{}
		if used > 0 {
			s.T, s.N = windowStart(p, now), used
		}
	}
	// A count that the rate's bits cannot hold is one the window can never
	// reach again: it is full.
	top := int64(1) << bits.Len64(uint64(p.rate))
	if s.N >= top {
		s.N = p.rate
	}
	if s.P >= top {
		s.P = p.rate
	}
}

// windowUsage is what a window of period old µs has counted at now: the
// fixed window's count when its window holds now, the sliding window's
// estimate rounded up.
func windowUsage(a Algorithm, s *State, old, now int64) int64 {
	start := now - now%old
	t := min(s.T, start) // a window after now's reads as now's
	var cur, prev int64
	switch t {
	case start:
		cur, prev = s.N, s.P
	case start - old:
		prev = s.N
	}
	if a == FixedWindow {
		if t == start {
			return s.N
		}
		return 0
	}
	est := swEstimate(prev, cur, now-start, old)
	used := int64(est)
	if float64(used) < est {
		used++
	}
	return used
}

// UnpackUnder returns the State that the packed window word, written under
// the packing from, holds as r's one limit reads it at now: for a store that
// keeps r's state elsewhere than in a word (its sliding window's counts no
// longer pack), so an edit moves what the client used along with it.
func (r *TakeRequest) UnpackUnder(word int64, from WindowPacking, now int64) State {
	if word < 0 || !from.valid() {
		return State{}
	}
	s := from.Unpack(word)
	if p, err := r.onlyParams(); err == nil && (r.Algorithm == FixedWindow || r.Algorithm == SlidingWindow) {
		reexpressWindow(r.Algorithm, &s, &params{period: from.period()}, &p, now)
	}
	return s
}
