package httplimit

import (
	"context"
	"errors"

	"github.com/ratewarden/ratewarden/core"
)

// limiters returns every limiter the policy decides with: its own, its
// tiers' and its overrides', each once.
func (p *Policy) limiters() []*core.Limiter {
	out := []*core.Limiter{p.def.lim}
	add := func(l *core.Limiter) {
		for _, o := range out {
			if o == l {
				return
			}
		}
		out = append(out, l)
	}
	for _, t := range p.tiers {
		add(t.lim)
	}
	for _, t := range p.overrideTiers {
		add(t.lim)
	}
	return out
}

// TokenLeaseStats returns what the token leases (core.WithTokenLease) of
// the policy's limiters, its own, its tiers' and its overrides', did on
// this instance since they were built, summed: for a metrics collector to
// read at each scrape, per policy, never per key. Its Calls over Decisions
// is the store calls per decision. The zero value when none leases.
func (p *Policy) TokenLeaseStats() core.TokenLeaseStats {
	var sum core.TokenLeaseStats
	for _, l := range p.limiters() {
		s := l.TokenLeaseStats()
		sum.Decisions += s.Decisions
		sum.Local += s.Local
		sum.Calls += s.Calls
		sum.Refreshes += s.Refreshes
		sum.Leased += s.Leased
		sum.Returned += s.Returned
		sum.Failures += s.Failures
	}
	return sum
}

// ReturnLeasedTokens gives every unspent leased token of the policy's
// limiters back to the store (core.Limiter.ReturnLeasedTokens): for a
// shutdown, so that a stopped instance strands no quota. It returns the
// store's errors, joined; nil for a policy that leases nothing.
func (p *Policy) ReturnLeasedTokens(ctx context.Context) error {
	var errs []error
	for _, l := range p.limiters() {
		errs = append(errs, l.ReturnLeasedTokens(ctx))
	}
	return errors.Join(errs...)
}
