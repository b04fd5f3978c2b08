package rules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// A Set gives back the tokens its policies' token leases (lease_tokens)
// hold but did not spend: a reload gives back those of the policies it
// replaces, in the background, and Close those of the rules in force, so
// that neither a reload nor a shutdown strands quota.

// DefaultLeaseReturnTimeout bounds each give-back of leased tokens unless
// WithLeaseReturnTimeout says otherwise: a few Redis round trips per hot
// key take far less.
const DefaultLeaseReturnTimeout = time.Second

// maxLeaseReturnTimeout is the longest WithLeaseReturnTimeout takes: a
// shutdown must not wait on a store that does not answer for longer.
const maxLeaseReturnTimeout = time.Minute

// WithLeaseReturnTimeout sets how long a Set waits for the store to take
// back the unspent tokens of its policies' token leases, on a reload (for
// the policies it replaces, in the background) and in Close (for the rules
// in force): from 1ms to 1 minute, DefaultLeaseReturnTimeout unless set.
// Tokens not given back in time stay counted in the store until their lease
// or window ends, as a crashed instance's do.
func WithLeaseReturnTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond || d > maxLeaseReturnTimeout {
			return fmt.Errorf("%w: lease return timeout %s, want 1ms to %s", core.ErrInvalidOption, d, maxLeaseReturnTimeout)
		}
		c.leaseReturnTimeout = d
		return nil
	}
}

// leaseReturns are the give-backs a Set started in the background, for
// Close to wait for.
type leaseReturns struct {
	wg sync.WaitGroup
}

// returnTimeout returns the bound of one give-back.
func (c *config) returnTimeout() time.Duration {
	if c.leaseReturnTimeout > 0 {
		return c.leaseReturnTimeout
	}
	return DefaultLeaseReturnTimeout
}

// returnDropped gives back, in the background, the leased tokens of the
// policies of prev that next no longer has (a policy a reload kept as it
// was is the same *httplimit.Policy in both, and keeps its leases). A
// request that chose a dropped policy just before the swap may still lease
// after the give-back; those tokens stay counted until their lease or
// window ends, within the lease's bound.
func (s *Set) returnDropped(prev, next *compiled) {
	if prev == nil {
		return
	}
	for _, p := range prev.limiting {
		if p == nil || !leases(p) || slices.Contains(next.limiting, p) {
			continue
		}
		s.leases.wg.Add(1)
		go func() {
			defer s.leases.wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.returnTimeout())
			defer cancel()
			if err := returnLeased(ctx, p); err != nil {
				s.cfg.log().Warn("ratewarden: giving back the leased tokens of a replaced policy failed; they stay counted until their lease ends",
					"policy", p.Limiter().Name(), "error", err)
			}
		}()
	}
}

// leases reports whether p's limiters lease tokens (core.WithTokenLease),
// or did.
func leases(p *httplimit.Policy) bool {
	return p.Limiter().TokenLease().Max > 0 || p.TokenLeaseStats() != (core.TokenLeaseStats{})
}

// returnLeased gives p's unspent leased tokens back until ctx ends.
// p.ReturnLeasedTokens first waits for the lease calls on their way, which
// ctx does not bound (each ends within its lease's TTL), so the wait for it
// is cut here: past ctx, the call goes on alone and its give-back fails.
func returnLeased(ctx context.Context, p *httplimit.Policy) error {
	done := make(chan error, 1)
	go func() { done <- p.ReturnLeasedTokens(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: lease calls of %s still on their way", ctx.Err(), p.Limiter().Name())
	}
}

// ReturnLeasedTokens gives every unspent token the token leases of the
// rules in force hold back to the store (httplimit.Policy.ReturnLeasedTokens),
// until ctx ends. It returns the store's errors, joined; nil when no policy
// leases. The policies stay usable: a hot key leases again.
func (s *Set) ReturnLeasedTokens(ctx context.Context) error {
	var errs []error
	for _, p := range s.Policies() {
		if leases(p) {
			errs = append(errs, returnLeased(ctx, p))
		}
	}
	return errors.Join(errs...)
}

// Close is for a shutdown, once the server stopped taking requests: it
// waits for the give-backs of leased tokens that reloads started (each
// bounded by the lease return timeout, WithLeaseReturnTimeout), then gives
// back the leased tokens of the rules in force within that timeout
// (ReturnLeasedTokens), so that a stopped instance strands no quota. It
// returns the store's errors, joined, and nil when no policy leases. The
// Set stays usable: a request decided after Close is decided as before
// (its hot key leases again), and Close may be called again.
func (s *Set) Close() error {
	s.leases.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.returnTimeout())
	defer cancel()
	if err := s.ReturnLeasedTokens(ctx); err != nil {
		return fmt.Errorf("rules: giving back leased tokens: %w", err)
	}
	return nil
}
