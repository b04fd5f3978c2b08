package core

import "fmt"

// Prepared is an algorithm bound to one limit, checked and converted once, for
// stores that decide a request with compare-and-swap and may retry: the retry
// then costs only the decision itself.
type Prepared struct {
	alg   Algorithm
	limit Limit
	p     params
}

// Prepare checks that a can apply l and converts l for repeated decisions.
func (a Algorithm) Prepare(l Limit) (Prepared, error) {
	if err := a.Validate(); err != nil {
		return Prepared{}, err
	}
	p, err := paramsOf(l)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{alg: a, limit: l, p: p}, nil
}

// ApplyMicros is Algorithm.ApplyMicros for the prepared algorithm and limit.
func (pr *Prepared) ApplyMicros(s *State, cost, now int64) (Decision, error) {
	if err := checkRequest(cost, now); err != nil {
		return Decision{}, err
	}
	d := pr.alg.decide(s, pr.p, cost, now, true)
	d.Limit = pr.limit
	return d, nil
}

// checkRequest reports a negative cost or a time out of range.
func checkRequest(cost, now int64) error {
	if cost < 0 {
		return fmt.Errorf("%w: %d is negative", ErrInvalidCost, cost)
	}
	if now < 0 || now > MaxTime {
		return fmt.Errorf("%w: %d µs since the epoch", ErrClock, now)
	}
	return nil
}
