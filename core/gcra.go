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
	tat := max(s.T, now)
	if cost > p.burst {
		return Decision{Exceeds: true, Remaining: max(0, p.divInterval(max(0, p.tau-(tat-now)))),
			ResetAfter: micros(tat - now), RetryAfter: micros(p.period)}
	}
	next := tat + cost*p.interval
	if next-now <= p.tau {
		if commit && cost > 0 {
			s.T = next
		}
		d := Decision{Allowed: true, Remaining: p.divInterval(p.tau - (next - now)), ResetAfter: micros(next - now)}
		if queue {
			d.Delay = micros(tat - now)
		}
		return d
	}
	return Decision{Remaining: max(0, p.divInterval(max(0, p.tau-(tat-now)))),
		ResetAfter: micros(tat - now), RetryAfter: micros(next - p.tau - now)}
}
