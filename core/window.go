package core

// Clock steps back. State further ahead of now than any real history could
// leave it is treated as "empty at now" (see rebase): no quota is minted, and
// the key recovers at its normal pace from the new now. For the windows, that
// is a window starting after the one that holds now: its counts are carried
// into the window holding now (the current count stays current, the previous
// stays previous), so they expire a Period (two for the sliding window's
// previous count) after that window starts. For the sliding log, timestamps
// after now are moved to now. For the meters it is a T beyond now + Burst
// intervals (tau), moved back to now + tau: an empty bucket at now.

// windowStart is the start of the window holding now: aligned to Period,
// or the calendar's (see window).
func windowStart(p *params, now int64) int64 {
	if p.cal != nil {
		return p.cal.window(now).start
	}
	return now - now%p.period
}

// window returns the window holding now: aligned to Period, or, for a
// calendar limit, the calendar's day, week or month (whose lengths vary),
// read from its cache.
func (p *params) window(now int64) win {
	if p.cal != nil {
		return p.cal.window(now)
	}
	return p.plainWindow(now)
}

// plainWindow is the window holding now for a limit that is not a calendar
// one: aligned to Period. The hot callers compute it inline and replace it
// for a calendar limit, since window itself is too large to inline.
func (p *params) plainWindow(now int64) win {
	start := now - now%p.period
	return win{start - p.period, start, start + p.period, start + 2*p.period}
}

// viewT is the window start of s as the algorithms read it at now: a window
// that starts after start (the clock stepped back) reads as start.
func viewT(s *State, start int64) int64 { return min(s.T, start) }

// rebase moves state that a clock which stepped back left further ahead of
// now than any real history could to "empty at now". A store's state changes
// only here and when a request is admitted: a spend (admitted or denied) and a
// refund rebase, a peek only reads the state as rebased.
func (a Algorithm) rebase(s *State, p *params, now int64) {
	switch a {
	case FixedWindow, SlidingWindow:
		s.T = viewT(s, windowStart(p, now))
	case SlidingLog:
		clampLog(s, now)
	default:
		if h := p.horizon(); s.T-now > h {
			s.T = now + h
		}
	}
}

// clampLog moves the log's entries after now to now; they are its newest, so
// the log stays in order.
func clampLog(s *State, now int64) {
	for i := s.N - 1; i >= 0; i-- {
		e := &s.Log[(s.Head+int(i))%len(s.Log)]
		if *e <= now {
			return
		}
		*e = now
	}
}

// fixedWindow allows Rate per aligned window [k*Period, (k+1)*Period), or
// per calendar window.
func fixedWindow(s *State, p *params, cost, now int64, commit bool) Decision {
	w := p.plainWindow(now)
	if p.cal != nil {
		w = p.cal.window(now)
	}
	start, end := w.start, w.end
	var count int64
	if viewT(s, start) == start {
		count = s.N
	}
	reset := int64(0)
	if count > 0 {
		reset = end - now
	}
	switch {
	case cost > p.rate:
		return Decision{Exceeds: true, Remaining: max(0, p.rate-count), ResetAfter: micros(reset), RetryAfter: micros(end - start)}
	case count+cost <= p.rate:
		if commit && cost > 0 {
			s.T, s.N = start, count+cost
		}
		if count+cost > 0 {
			reset = end - now
		}
		return Decision{Allowed: true, Remaining: p.rate - count - cost, ResetAfter: micros(reset)}
	default:
		return Decision{Remaining: max(0, p.rate-count), ResetAfter: micros(reset), RetryAfter: micros(end - now)}
	}
}

// slidingWindow is the sliding window counter: with e the time elapsed in the
// current window, a request is admitted when
//
//	prev * (Period - e) / Period + cur + cost <= Rate.
//
// A calendar window's Period is the current window's length (a month after
// February weighs February's count over the new month's days).
//
// The estimate is computed in float64 with the operations in a fixed order (and
// conversions that forbid fused multiply-add), so the Lua scripts, whose numbers
// are IEEE doubles, compute bit for bit the same value.
func slidingWindow(s *State, p *params, cost, now int64, commit bool) Decision {
	w := p.plainWindow(now)
	if p.cal != nil {
		w = p.cal.window(now)
	}
	start, length := w.start, w.end-w.start
	var cur, prev int64
	switch viewT(s, start) {
	case start:
		cur, prev = s.N, s.P
	case w.prev:
		prev = s.N
	}
	elapsed := max(0, now-start)
	reset := func(cur, prev int64) int64 {
		switch {
		case cur > 0:
			return w.next - now
		case prev > 0:
			return w.end - now
		}
		return 0
	}
	remaining := func(est float64) int64 {
		r := float64(p.rate) - est
		if r <= 0 {
			return 0
		}
		return int64(r)
	}
	if cost > p.rate {
		return Decision{Exceeds: true, Remaining: remaining(swEstimate(prev, cur, elapsed, length)),
			ResetAfter: micros(reset(cur, prev)), RetryAfter: micros(length)}
	}
	est := swEstimate(prev, cur+cost, elapsed, length)
	if est <= float64(p.rate) {
		if commit && cost > 0 {
			s.T, s.N, s.P = start, cur+cost, prev
		}
		return Decision{Allowed: true, Remaining: remaining(est), ResetAfter: micros(reset(cur+cost, prev))}
	}
	return Decision{Remaining: remaining(swEstimate(prev, cur, elapsed, length)),
		ResetAfter: micros(reset(cur, prev)), RetryAfter: micros(swRetry(prev, cur, cost, w, now, p.rate))}
}

// swEstimate is prev*(period-elapsed)/period + cur, in the order the Lua script
// uses.
func swEstimate(prev, cur, elapsed, period int64) float64 {
	w := float64(period-elapsed) / float64(period)
	return float64(float64(prev)*w) + float64(cur)
}

// swRetry finds the first instant after now at which a request of cost would be
// admitted, given counts prev and cur in the window w. It solves the
// inequality in closed form, then steps forward past any float rounding.
func swRetry(prev, cur, cost int64, w win, now, rate int64) int64 {
	l1, l2 := w.end-w.start, w.next-w.end
	fits := func(t int64) bool {
		switch {
		case t < w.end:
			return swEstimate(prev, cur+cost, t-w.start, l1) <= float64(rate)
		case t < w.next:
			return swEstimate(cur, cost, t-w.end, l2) <= float64(rate)
		}
		return true
	}
	var t int64
	if cur+cost <= rate { // fits within this window once prev has decayed enough
		need := float64(l1) - float64(rate-cur-cost)*float64(l1)/float64(prev)
		t = w.start + int64(need)
	} else { // fits in the next window once cur, become prev, has decayed enough
		need := float64(l2) - float64(rate-cost)*float64(l2)/float64(cur)
		t = w.end + max(0, int64(need))
	}
	t = max(t, now+1)
	for !fits(t) {
		t++
	}
	return t - now
}

// slidingLog keeps the timestamps of admitted requests (cost n adds n entries)
// and admits a request when the entries younger than Period plus its cost stay
// within Rate. Timestamps never go backwards: entries after now (a clock that
// stepped back) read as now, and a spend moves them there (see rebase), so no
// quota is minted.
//
// The entries that have left the window (at or before now-Period) are a prefix
// of the ring, since timestamps never decrease; it is found by binary search
// and dropped only when a request is admitted, so a denial or a peek leaves the
// State exactly as it was.
func slidingLog(s *State, p *params, cost, now int64, commit bool) Decision {
	head, n := s.Head, s.N
	if drop := logExpired(s, now-p.period); drop > 0 {
		head, n = (head+int(drop))%len(s.Log), n-drop
	}
	// An entry after now (the clock stepped back) reads as now (see rebase).
	at := func(i int64) int64 { return min(now, s.Log[(head+int(i))%len(s.Log)]) }
	reset := int64(0)
	newest := now
	if n > 0 {
		reset = at(n-1) + p.period - now
	}
	switch {
	case cost > p.rate:
		return Decision{Exceeds: true, Remaining: max(0, p.rate-n), ResetAfter: micros(reset), RetryAfter: micros(p.period)}
	case n+cost <= p.rate:
		remaining := p.rate - n - cost
		if cost > 0 {
			reset = newest + p.period - now
			if commit {
				if n == 0 {
					head = 0
				}
				s.Head, s.N = head, n
				clampLog(s, now)
				logPush(s, p.rate, newest, cost)
			}
		}
		return Decision{Allowed: true, Remaining: remaining, ResetAfter: micros(reset)}
	default:
		// The request fits once the (n+cost-Rate) oldest entries have left.
		k := n + cost - p.rate
		return Decision{Remaining: max(0, p.rate-n), ResetAfter: micros(reset), RetryAfter: micros(at(k-1) + p.period - now)}
	}
}

// logExpired returns how many of s's entries, oldest first, are at or before
// cutoff.
func logExpired(s *State, cutoff int64) int64 {
	if s.N == 0 || s.Log[s.Head] > cutoff {
		return 0
	}
	// The first entry has expired: find the first one that has not.
	lo, hi := int64(1), s.N
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		if s.Log[(s.Head+int(m))%len(s.Log)] <= cutoff {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// logPush appends cost copies of ts, growing the ring up to rate entries.
func logPush(s *State, rate, ts, cost int64) {
	if need := s.N + cost; need > int64(len(s.Log)) {
		n := min(rate, max(need, 2*int64(len(s.Log)), 4))
		grown := make([]int64, n)
		for i := int64(0); i < s.N; i++ {
			grown[i] = s.Log[(s.Head+int(i))%len(s.Log)]
		}
		s.Log, s.Head = grown, 0
	}
	for range cost {
		s.Log[(s.Head+int(s.N))%len(s.Log)] = ts
		s.N++
	}
}
