package core

// What a Store implementation needs beyond the Store interface: the
// algorithms applied to a request with the figures its Limiter computed once
// (so a store's hot path divides nothing), a hash of what must be kept
// apart, and when a state may be dropped. Users of a Limiter need none of it.
//
// Refunds reach a store as requests with a negative Cost and an Admitted
// instant. A store that decides with Decide (and AdvanceWord) handles them
// with no code of its own, and should store nothing for a key it does not
// hold. A store that decides in another language (the Lua scripts) applies
// refund.go's rules, and, on its own clock, places the admission at its own
// now minus (Now - Admitted): the caller's clock may be off the store's by
// any amount, but the time between two calls is about the same on both.

// plan is what a Limiter computes once for its algorithm and limits.
type plan struct {
	alg    Algorithm
	limits []Limit
	params []params
	ptrs   []*params // &params[i], as applyAll takes them
	fp     uint64    // the fingerprint of alg and limits
	debt   int64     // the Limiter's debt bound (WithDebt)
}

func newPlan(alg Algorithm, limits []Limit) (plan, error) {
	p := plan{alg: alg, limits: limits, params: make([]params, len(limits)), ptrs: make([]*params, len(limits))}
	for i := range limits {
		var err error
		if p.params[i], err = computeParams(limits[i]); err != nil {
			return plan{}, err
		}
		p.ptrs[i] = &p.params[i]
	}
	p.fp = fingerprint(alg, limits)
	return p, nil
}

// prepared returns the plan of the Limiter that built r, or nil when r was
// built by hand or its algorithm or limits were changed since.
func (r *TakeRequest) prepared() *plan {
	p := r.plan
	if p == nil || p.alg != r.Algorithm || len(r.Limits) == 0 || len(r.Limits) != len(p.limits) || p.debt != r.MaxDebt {
		return nil
	}
	if &r.Limits[0] != &p.limits[0] {
		return nil
	}
	return p
}

// Decide is Algorithm.ApplyAll of r's algorithm, limits and cost at now (µs
// since the epoch) over states, writing the decision into d. For a refund (a
// negative Cost) it gives back -Cost admitted at r.Admitted, then decides a
// peek. A store on its own clock (Redis's TIME) places the admission at its
// own now minus (r.Now - r.Admitted), so a clock skew never moves it.
func (r *TakeRequest) Decide(d *Decision, states []State, now int64) error {
	p := r.prepared()
	switch {
	case p == nil || r.Charge || len(states) != len(r.Limits) || !validArgs(r.Algorithm, r.Cost, now):
		if r.Charge || r.MaxDebt != 0 {
			return r.decideSettle(d, states, now)
		}
		if r.Cost < 0 {
			return r.refund(d, states, now)
		}
		var err error
		*d, err = r.Algorithm.ApplyAll(states, r.Limits, r.Cost, now)
		return err
	case len(states) == 1: // the common case, without applyAll's loops
		r.Algorithm.applyPrepared(d, &states[0], &r.Limits[0], &p.params[0], r.Cost, now)
	default:
		r.Algorithm.applyAll(d, states, r.Limits, p.ptrs, r.Cost, now)
	}
	if p.debt != 0 {
		d.Debt = r.Algorithm.debtOf(&states[d.Index], &p.params[d.Index], now)
	}
	return nil
}

// AdvanceWord returns the one-word state (State.T) r, a spend or a refund,
// leaves at now, with one limit and a one-word algorithm: for a lock-free
// store to swap in, before it builds the Decision with Decide on the state it
// loaded.
func (r *TakeRequest) AdvanceWord(t, now int64) int64 {
	if r.Charge {
		return r.chargeWord(t, now)
	}
	if len(r.Limits) != 1 || !r.Algorithm.OneWord() || r.Cost == 0 || !validArgs(r.Algorithm, r.Cost, now) {
		if r.Cost < 0 && len(r.Limits) == 1 && r.Algorithm.OneWord() {
			return r.refundWord(t, now)
		}
		return t
	}
	if pl := r.prepared(); pl != nil {
		return advanceWord(&pl.params[0], t, r.Cost, now)
	}
	p, err := computeParams(r.Limits[0])
	if err != nil || r.Limits[0].Calendar != 0 { // a meter takes no calendar: Decide says so
		return t
	}
	p.setDebt(r.Algorithm, max(0, r.MaxDebt))
	return advanceWord(&p, t, r.Cost, now)
}

// advanceWord is the meter's next state for a valid request: next when the
// cost fits, t when it does not, and t rebased to an empty meter at now when
// a clock that stepped back left it further ahead than tau (see rebase).
func advanceWord(p *params, t, cost, now int64) int64 {
	if h := p.horizon(); t-now > h {
		t = now + h
	}
	if cost > p.burst {
		return t
	}
	if next, fits := meterNext(p, max(t, now), cost, now); fits {
		return next
	}
	return t
}

// FreshAt returns the instant (µs since the epoch) from which states decide
// as fresh ones would, so a store may drop them; 0 when they are fresh.
func (r *TakeRequest) FreshAt(states []State) int64 {
	var at int64
	for i := range min(len(states), len(r.Limits)) {
		at = max(at, r.Algorithm.freshAt(&states[i], &r.Limits[i]))
	}
	return at
}

// Fingerprint hashes r's algorithm and limits' figures (not their names):
// requests under different figures have different fingerprints, but for
// negligible chance, as a cache of decisions needs. A store keys its states
// by Identity instead, which an edit of the figures keeps. It is stable
// within a process only.
func (r *TakeRequest) Fingerprint() uint64 {
	if p := r.prepared(); p != nil {
		return p.fp
	}
	return fingerprint(r.Algorithm, r.Limits)
}

// fingerprint hashes alg and the limits' Rate, Period and effective Burst.
func fingerprint(alg Algorithm, limits []Limit) uint64 {
	f := uint64(alg+1) * 0x9e3779b97f4a7c15
	for i, l := range limits {
		lf := uint64(l.Rate)
		lf = lf*0x100000001b3 ^ uint64(l.Period)
		lf = mix64(lf*0x100000001b3 ^ uint64(l.EffectiveBurst()))
		if l.Calendar != 0 {
			lf ^= mix64(calendarHash(&l))
		}
		if i == 0 {
			f ^= lf
		} else {
			f = mix64(f) ^ lf
		}
	}
	return f
}

// mix64 is the splitmix64 finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
