package flags

import (
	"flag"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// DefaultLeaseTTL is -lease-ttl's default: a leased token is spent at most
// 100 ms after Redis counted it.
const DefaultLeaseTTL = 100 * time.Millisecond

// defineLease declares -lease and -lease-ttl on fs.
func (r *rawFlags) defineLease(fs *flag.FlagSet) {
	fs.Int64Var(&r.lease, "lease", 0, "with a Redis -store: take up to `N` tokens of a hot client per Redis call and spend them\nhere (core.WithTokenLease's Max; a cold client still costs one call per request); on every\nserver together the windows still admit at most -limit per window, the meters at most\nburst + rate x (T + -lease-ttl) in any T; at most 1 to the limit's rate; 0: off")
	fs.DurationVar(&r.leaseTTL, "lease-ttl", DefaultLeaseTTL, "with -lease: the longest a leased token is spent after Redis counted it (tau), from\n1µs to the limit's period; a window's lease also ends with its window")
}

// parseLease sets c.LeaseTokens and c.LeaseTTL from -lease and -lease-ttl:
// a lease the limit (and every tier's) can keep exactly, with a Redis
// -store, and not with -rules (a policy's lease_tokens and lease_ttl fields
// say it there).
func (c *Config) parseLease(r *rawFlags) error {
	if !r.set["lease"] || r.lease == 0 {
		if r.set["lease-ttl"] {
			return usageErr("-lease-ttl goes with -lease N")
		}
		return nil
	}
	switch {
	case c.RulesSource != NoRules:
		return usageErr("-lease does not go with -rules: give a policy lease_tokens: N (and lease_ttl) in the document")
	case c.Store == Memory:
		return usageErr("-lease needs a Redis -store: the memory store decides in this process already")
	}
	tl := core.TokenLease{Max: r.lease, TTL: r.leaseTTL}
	limits := []core.Limit{c.Limit}
	for _, t := range c.Tiers {
		limits = append(limits, t.Limit)
	}
	if err := core.ValidateTokenLease(tl, c.Algorithm, limits); err != nil {
		return usageErr("-lease %d -lease-ttl %s: %v", r.lease, r.leaseTTL, err)
	}
	c.LeaseTokens, c.LeaseTTL = r.lease, r.leaseTTL
	return nil
}

// leaseOptions is the limiter option of -lease: none without it.
func (c *Config) leaseOptions() []core.Option {
	if c.LeaseTokens == 0 {
		return nil
	}
	return []core.Option{core.WithTokenLease(core.TokenLease{Max: c.LeaseTokens, TTL: c.LeaseTTL})}
}

// leaseString describes -lease for Config.String, "" without it.
func (c *Config) leaseString() string {
	if c.LeaseTokens == 0 {
		return ""
	}
	return fmt.Sprintf("hot clients lease up to %d tokens for %s", c.LeaseTokens, c.LeaseTTL)
}
