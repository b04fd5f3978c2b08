package httplimit

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

const (
	// MaxInFlightWaiting bounds WithInFlightWait's max.
	MaxInFlightWaiting = 100_000
	// MaxInFlightWait bounds WithInFlightWait's timeout.
	MaxInFlightWait = time.Minute
	// InFlightPollInterval is how often a waiting request tries again for a
	// slot when none was released on its instance: a slot another instance
	// frees is taken within this time.
	InFlightPollInterval = 50 * time.Millisecond
)

// inflightWait is WithInFlightWait's queue of one policy.
type inflightWait struct {
	max     int64
	timeout time.Duration
}

// WithInFlightWait makes a request that finds every in-flight slot of its
// key taken (core.WithInFlight) wait for one, up to timeout, instead of
// being refused at once: a bounded wait queue. At most max requests of the
// policy wait at once on this instance (more are refused at once); each
// tries again as soon as a slot of the policy is released on this instance,
// and otherwise every InFlightPollInterval (a slot freed by another
// instance). A request still without a slot at timeout, or whose client
// hangs up, gets the in-flight refusal (429, Retry-After: 1), as without the
// option. A waiting request holds no slot and its rates' cost stays spent
// until it is admitted or refused (then given back). A dry run never waits.
// max must be 1 to MaxInFlightWaiting and timeout 1ms to MaxInFlightWait,
// else the error wraps core.ErrInvalidOption.
func WithInFlightWait(maxWaiting int, timeout time.Duration) Option {
	return func(p *Policy) error {
		switch {
		case maxWaiting < 1 || maxWaiting > MaxInFlightWaiting:
			return fmt.Errorf("%w: %d requests waiting for an in-flight slot: from 1 to %d", core.ErrInvalidOption, maxWaiting, MaxInFlightWaiting)
		case timeout < time.Millisecond || timeout > MaxInFlightWait:
			return fmt.Errorf("%w: a wait for an in-flight slot of %s: from 1ms to %s", core.ErrInvalidOption, timeout, MaxInFlightWait)
		}
		p.inflightWait = &inflightWait{max: int64(maxWaiting), timeout: timeout}
		return nil
	}
}

// acquire takes one of key's slots under t, within t's store timeout.
func (t *tier) acquire(ctx context.Context, key string) (core.Slot, core.LeaseDecision, error) {
	if t.timeout <= 0 {
		return t.lim.Acquire(ctx, key)
	}
	actx, cancel := core.WithStoreTimeout(ctx, t.timeout)
	defer cancel()
	return t.lim.Acquire(actx, key)
}

// waitSlot waits, under WithInFlightWait, for one of key's slots after
// refused found them all taken: it returns the slot and its decision, or
// refused when the queue is full, the wait timed out or the client left,
// or the store's error.
func (p *Policy) waitSlot(ctx context.Context, r keyfuncs.Request, t *tier, key string, refused core.LeaseDecision) (core.Slot, core.LeaseDecision, error) {
	w := p.inflightWait
	if p.inflightWaiting.Add(1) > w.max {
		p.inflightWaiting.Add(-1)
		return core.Slot{}, refused, nil
	}
	defer p.inflightWaiting.Add(-1)
	hctx, hc := holdContext(ctx, r), hangUpChecker(r)
	deadline := time.NewTimer(w.timeout)
	defer deadline.Stop()
	poll := time.NewTicker(InFlightPollInterval)
	defer poll.Stop()
	for {
		freed := t.lim.SlotFreed()
		slot, ld, err := t.acquire(ctx, key)
		if err != nil || ld.Allowed {
			return slot, ld, err
		}
		select {
		case <-freed:
		case <-poll.C:
			if hc != nil && hc.ClientHungUp() {
				return core.Slot{}, ld, nil
			}
		case <-deadline.C:
			return core.Slot{}, ld, nil
		case <-hctx.Done():
			return core.Slot{}, ld, nil
		}
	}
}
