package core

import "fmt"

// Refunds: giving back a cost that was admitted. A Store sees one as a
// TakeRequest with a negative Cost and the admission instant, and hands it to
// TakeRequest.Decide (or AdvanceWord), which applies the rules below to each
// limit's state and then decides a peek. Each rule gives back at most -Cost,
// only what the admission could still hold, and never more than a fresh key
// has (the Lua scripts apply the same rules):
//
//   - token bucket, leaky bucket, GCRA: the state instant T moves back by n
//     emission intervals, not below now (a full meter). Nothing once the meter
//     is full, or once a whole burst's refill time (Burst intervals) has
//     passed since the admission: its cost has been refilled, and what the
//     meter lacks now was spent later.
//   - fixed window: the count drops by n (not below 0) when the admission's
//     window is still the current one; nothing otherwise.
//   - sliding window: the count of the admission's window, the current or the
//     previous one, drops by n (not below 0); nothing when it is older.
//   - sliding log: the n latest timestamps not after the admission instant
//     are removed, those still inside the window only. An admission recorded
//     its cost at its own instant, so its entries go first; when they are
//     fewer than n (an earlier refund took some), older ones go next, never
//     newer ones: those belong to later admissions, and an older entry leaves
//     the window sooner, so removing it gives back no more than the
//     admission's own entry would have.

// refund gives back -r.Cost under each of r's limits over states at now, and
// decides a peek into d.
func (r *TakeRequest) refund(d *Decision, states []State, now int64) error {
	if len(states) != len(r.Limits) || len(r.Limits) == 0 {
		return fmt.Errorf("%w: %d states for %d limits", ErrInvalidLimit, len(states), len(r.Limits))
	}
	// Every limit is checked before any state changes.
	var bufs [maxLimits]params
	ps := bufs[:0]
	if len(r.Limits) > maxLimits {
		ps = make([]params, 0, len(r.Limits))
	}
	for i := range r.Limits {
		var p params
		if _, err := check(r.Algorithm, &r.Limits[i], 0, now, &p); err != nil {
			return err
		}
		ps = append(ps, p)
	}
	n, adm := r.refunded(), r.admittedAt(now)
	for i := range ps {
		r.Algorithm.refund(&states[i], &ps[i], n, adm, now)
	}
	var err error
	*d, err = r.Algorithm.ApplyAll(states, r.Limits, 0, now)
	return err
}

// admittedAt is r.Admitted in µs since the epoch, now when it is zero or
// after now.
func (r *TakeRequest) admittedAt(now int64) int64 {
	if r.Admitted.IsZero() {
		return now
	}
	return max(0, min(now, Micros(r.Admitted)))
}

// refund gives back n (> 0) admitted at adm from one limit's state at now.
func (a Algorithm) refund(s *State, p *params, n, adm, now int64) {
	a.rebase(s, p, now)
	switch a {
	case FixedWindow:
		start := windowStart(p, now)
		if s.T == start && windowStart(p, adm) == start {
			s.N = max(0, s.N-n)
		}
	case SlidingWindow:
		refundSlidingWindow(s, p, n, adm, now)
	case SlidingLog:
		refundLog(s, p, n, adm, now)
	default:
		s.T = refundMeter(p, s.T, n, adm, now)
	}
}

// refundMeter is a meter's state T after giving back n admitted at adm.
func refundMeter(p *params, t, n, adm, now int64) int64 {
	t = min(t, now+p.horizon()) // rebased first (see rebase): a refund never mints
	if t <= now || now-adm >= p.tau {
		return t
	}
	return max(now, t-min(n, p.burst)*p.interval)
}

func refundSlidingWindow(s *State, p *params, n, adm, now int64) {
	w := p.window(now)
	start := w.start
	admStart := windowStart(p, adm)
	switch {
	case s.T == start && admStart == start:
		s.N = max(0, s.N-n)
	case s.T == start && admStart == w.prev:
		s.P = max(0, s.P-n)
	case s.T == w.prev && admStart == s.T: // the state's window is now the previous one
		s.N = max(0, s.N-n)
	}
}

// refundLog removes up to n of the latest entries at or before adm that are
// still inside the window at now.
func refundLog(s *State, p *params, n, adm, now int64) {
	first := logExpired(s, now-p.period) // the first live entry
	upto := logExpired(s, adm)           // entries at or before adm
	k := min(n, upto-first)
	if k <= 0 {
		return
	}
	size := len(s.Log)
	for i := upto; i < s.N; i++ {
		s.Log[(s.Head+int(i-k))%size] = s.Log[(s.Head+int(i))%size]
	}
	s.N -= k
}

// refundWord is AdvanceWord for a refund: the one-word state after giving
// back -r.Cost.
func (r *TakeRequest) refundWord(t, now int64) int64 {
	if !r.Algorithm.valid() || now < 0 || now > MaxTime {
		return t
	}
	p := r.prepared()
	var buf params
	if p == nil {
		var err error
		if buf, err = computeParams(r.Limits[0]); err != nil {
			return t
		}
		buf.setDebt(r.Algorithm, max(0, r.MaxDebt))
	} else {
		buf = p.params[0]
	}
	return refundMeter(&buf, t, r.refunded(), r.admittedAt(now), now)
}

// refunded is what a refund gives back, -r.Cost, kept positive for the most
// negative Cost.
func (r *TakeRequest) refunded() int64 {
	return max(-r.Cost, -(r.Cost + 1))
}
