package core

import "fmt"

// StoreChecker is implemented by a store that cannot decide every request a
// Limiter may build, such as a combination of options its scripts lack.
// NewLimiter and Limiter.Tier ask it once about the limiter's algorithm,
// limits and options, so that what the store cannot do fails when the
// limiter is built, never at request time (where the policy would fail open
// or closed on every request).
type StoreChecker interface {
	// CheckRequest returns why the store cannot decide req, a request of
	// the kind the limiter will send (its Key and Now are empty), or nil.
	CheckRequest(req TakeRequest) error
}

// checkStore asks a StoreChecker store about the requests l will send: a
// decision of cost 1 and, under a debt bound, a settle's charge.
func (l *Limiter) checkStore() error {
	c, ok := l.store.(StoreChecker)
	if !ok {
		return nil
	}
	req := l.request("", 1, SystemClock{}.Now())
	if err := c.CheckRequest(req); err != nil {
		return fmt.Errorf("%T cannot decide this limiter's requests: %w", l.store, err)
	}
	if l.debt == 0 {
		return nil
	}
	req.Charge = true
	if err := c.CheckRequest(req); err != nil {
		return fmt.Errorf("%T cannot settle this limiter's requests: %w", l.store, err)
	}
	return nil
}
