package rules

import (
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// A policy's token-lease fields (core.WithTokenLease; not the in-flight
// slot's lease): lease_tokens, the most tokens of a hot key one store call
// leases, and lease_ttl, the longest a leased token is spent after the store
// counted it (DefaultLeaseTTL, or the policy's shortest period if shorter,
// when absent).

// DefaultLeaseTTL is a policy's lease_ttl when it gives lease_tokens alone
// (or its shortest period, if shorter).
const DefaultLeaseTTL = 100 * time.Millisecond

// decodeLeaseMax reads a lease_tokens (the lease's Max): a whole number, at least 1.
func decodeLeaseMax(d *decoder, v *yaml.Node, at *path, p *Policy) {
	n, ok := d.integer(v, at)
	if !ok {
		return
	}
	if n < 1 {
		d.fail(deref(v), at, core.ErrInvalidOption, "lease_tokens %d: a lease takes at least 1 token", n)
		return
	}
	p.TokenLease.Max = n
}

// decodeLeaseTTL reads a lease_ttl: a Go duration above 0, such as 100ms.
func decodeLeaseTTL(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s, ok := d.str(v, at)
	if !ok {
		return
	}
	ttl, err := time.ParseDuration(s)
	if err != nil || ttl <= 0 {
		d.fail(deref(v), at, core.ErrInvalidOption, "lease_ttl %q is not a duration above 0 such as 100ms", s)
		return
	}
	p.TokenLease.TTL = ttl
}

// policyTokenLease reports, at the field, a lease_ttl without lease_tokens.
// It returns the names of the fields with problems.
func (d *decoder) policyTokenLease(present map[string]*yaml.Node, at *path, p *Policy) []string {
	if v := present["lease_ttl"]; v != nil && present["lease_tokens"] == nil {
		d.fail(deref(v), at.dot("lease_ttl"), nil, "lease_ttl applies to a token lease: write lease_tokens beside it")
		p.TokenLease = core.TokenLease{}
		return []string{"lease_ttl"}
	}
	return nil
}

// tokenLease checks a policy's token lease against its algorithm and every
// limit its limiters take (its limits, tiers' and overrides'), also for a
// Document built in Go.
func (v *validator) tokenLease(p *Policy, i int, at *path) {
	if p.TokenLease.Max == 0 || v.skip(i, "lease_tokens") || v.skip(i, "lease_ttl") || v.skip(i, "algorithm") {
		return
	}
	if p.Unlimited {
		v.report(at.dot("lease_tokens"), p.Pos, nil, "an unlimited policy has no tokens to lease: remove lease_tokens or unlimited")
		return
	}
	if p.Algorithm.Validate() != nil {
		return // reported at the algorithm
	}
	limits := policyLimits(p)
	if err := core.ValidateTokenLease(effectiveTokenLease(p.TokenLease, limits), p.Algorithm, withBursts(limits)); err != nil {
		v.report(at.dot("lease_tokens"), p.Pos, err, "%v", err)
	}
}

// policyLimits are every limit p's limiters apply: its limits, its tiers'
// and its overrides'.
func policyLimits(p *Policy) []core.Limit {
	limits := append([]core.Limit(nil), p.Limits...)
	if p.Tiers != nil {
		for _, lvl := range p.Tiers.Levels {
			limits = append(limits, lvl.Limits...)
		}
	}
	for _, o := range p.Overrides {
		limits = append(limits, o.Limits...)
	}
	return limits
}

// withBursts returns limits with their bursts filled in as a Limiter holds
// them (0 is Rate).
func withBursts(limits []core.Limit) []core.Limit {
	out := make([]core.Limit, len(limits))
	for i, l := range limits {
		if l.Burst == 0 {
			l.Burst = l.Rate
		}
		out[i] = l
	}
	return out
}

// effectiveTokenLease is t with its TTL defaulted: DefaultLeaseTTL, or the
// shortest period of limits if shorter.
func effectiveTokenLease(t core.TokenLease, limits []core.Limit) core.TokenLease {
	if t.TTL != 0 {
		return t
	}
	t.TTL = DefaultLeaseTTL
	for _, l := range limits {
		if l.Period > 0 && l.Period < t.TTL {
			t.TTL = l.Period
		}
	}
	return t
}

// tokenLeaseOption returns the limiter option of p's token lease, nil when
// it has none.
func tokenLeaseOption(p *Policy) core.Option {
	if p.TokenLease.Max == 0 {
		return nil
	}
	return core.WithTokenLease(effectiveTokenLease(p.TokenLease, policyLimits(p)))
}
