package core

// The token bucket, the leaky bucket and GCRA share one state: a single
// timestamp T. For GCRA it is the theoretical arrival time (TAT) of the next
// request at the sustained rate; for the token bucket, the instant the bucket is
// full again, so that tokens(now) = Burst - (T - now)/interval. Both readings are
// the same arithmetic, carried out in whole microseconds with no rounding drift.

// gcra implements the generic cell rate algorithm: a request of cost n is
// admitted when max(T, now) + n*interval - now <= burst*interval.
func gcra(s *State, p *params, cost, now int64, commit bool) Decision {
	return meter(s, p, cost, now, commit, false)
}

// tokenBucket: a bucket of Burst tokens refilled at one per interval. Spending
// n tokens is admitted when n tokens are present; that is exactly GCRA's test.
func tokenBucket(s *State, p *params, cost, now int64, commit bool) Decision {
	return meter(s, p, cost, now, commit, false)
}

// leakyBucket is the leaky bucket as a queue: the same meter decides whether
// the request fits in a queue of Burst, and an admitted request leaves at its
// slot, max(T, now), so it carries Delay = max(T, now) - now.
func leakyBucket(s *State, p *params, cost, now int64, commit bool) Decision {
	return meter(s, p, cost, now, commit, true)
}

func meter(s *State, p *params, cost, now int64, commit, queue bool) Decision {
	var d Decision
	meterInto(&d, s, p, cost, now, commit, queue)
	return d
}

// meterInto is meter writing into d, which it overwrites whole except Limit and
// Index, so the one-word fast path copies no Decision around.
func meterInto(d *Decision, s *State, p *params, cost, now int64, commit, queue bool) {
	tat := max(s.T, now)
	if h := p.horizon(); tat-now > h { // a clock that stepped back: empty at now (see rebase)
		tat = now + h
		if commit && cost > 0 {
			s.T = tat
		}
	}
	d.Delay, d.Debt = 0, 0
	if cost > p.burst {
		d.Allowed, d.Exceeds = false, true
		d.Remaining = max(0, p.divInterval(max(0, p.tau-(tat-now))))
		d.ResetAfter, d.RetryAfter = micros(tat-now), micros(p.period)
		return
	}
	d.Exceeds = false
	if next, fits := meterNext(p, tat, cost, now); fits {
		if commit && cost > 0 {
			s.T = next
		}
		d.Allowed = true
		d.Remaining = p.divInterval(p.tau - (next - now))
		d.ResetAfter, d.RetryAfter = micros(next-now), 0
		if queue {
			d.Delay = micros(tat - now)
		}
		return
	}
	d.Allowed = false
	d.Remaining = max(0, p.divInterval(max(0, p.tau-(tat-now))))
	d.ResetAfter, d.RetryAfter = micros(tat-now), micros(tat+cost*p.interval-p.tau-now)
}

// meterNext is the meter's test for a cost within the burst: the request
// leaves the state at next = tat + cost*interval, where tat = max(T, now), and
// fits when next - now <= tau.
func meterNext(p *params, tat, cost, now int64) (next int64, fits bool) {
	next = tat + cost*p.interval
	return next, next-now <= p.tau
}
