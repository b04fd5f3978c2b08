package flags

import (
	"strings"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
)

// Tier is one -tier NAME=LIMIT: a plan that the -tier-claim claim of a
// client's token picks.
type Tier struct {
	Name  string
	Limit core.Limit
}

// maxTierNameLen is the longest name -tier takes.
const maxTierNameLen = 64

// parseTiers sets c.TierClaim, c.Tiers and, to the first tier's, c.Limit,
// from -tier-claim and the -tier flags. It checks that they come together,
// with -key jwt, and without -limit or -burst (set holds the names of the
// flags given).
func (c *Config) parseTiers(claim string, tiers []string, set map[string]bool) error {
	switch {
	case claim == "" && len(tiers) == 0:
		return nil
	case claim == "":
		return usageErr("-tier needs -tier-claim NAME, the JWT claim that picks the tier")
	case len(tiers) == 0:
		return usageErr("-tier-claim needs at least one -tier NAME=LIMIT, e.g. -tier free=10/m")
	case c.Key != "jwt":
		return usageErr("-tier-claim needs -key jwt: the tier is a claim of the client's token")
	case set["limit"]:
		return usageErr("-limit and -tier both give the limit: with tiers, the first -tier is the default")
	case set["burst"]:
		return usageErr(`-burst does not apply to tiers: give a tier's burst in its limit, e.g. -tier "paid=10/s burst 20"`)
	}
	c.TierClaim = claim
	seen := make(map[string]bool, len(tiers))
	for _, s := range tiers {
		t, err := parseTier(s, c.Algorithm)
		if err != nil {
			return err
		}
		if seen[t.Name] {
			return usageErr("-tier %q: tier %s is given twice", s, t.Name)
		}
		seen[t.Name] = true
		c.Tiers = append(c.Tiers, t)
	}
	c.Limit = c.Tiers[0].Limit
	return nil
}

// parseTier reads one -tier NAME=LIMIT and checks that alg takes the limit.
func parseTier(s string, alg core.Algorithm) (Tier, error) {
	name, limit, ok := strings.Cut(s, "=")
	if !ok {
		return Tier{}, usageErr("-tier %q: want NAME=LIMIT, e.g. free=10/m", s)
	}
	if !validTierName(name) {
		return Tier{}, usageErr("-tier %q: the name must be 1 to %d letters, digits, '-', '_' or '.'", s, maxTierNameLen)
	}
	l, err := core.ParseLimit(limit)
	if err != nil {
		return Tier{}, usageErr("-tier %q: %v", s, err)
	}
	if err := alg.ValidateLimit(l); err != nil {
		return Tier{}, usageErr("-tier %q with -algorithm %s: %v", s, alg, err)
	}
	return Tier{Name: name, Limit: l}, nil
}

// validTierName reports whether name is 1 to maxTierNameLen ASCII letters,
// digits, '-', '_' or '.': a name fit for a header field and a metric label.
func validTierName(name string) bool {
	if name == "" || len(name) > maxTierNameLen {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// TierPick returns the key function that reads the -tier-claim claim of the
// client's verified token: the name of its tier.
func (c *Config) TierPick() (keyfuncs.Func, error) {
	return jwtkey.Subject(jwtkey.WithHMACSecret([]byte(c.JWTSecret)), jwtkey.WithClaim(c.TierClaim))
}

// tiers returns the tiers of lim, the limiter of -algorithm and -limit: the
// first, the default for a token whose claim names no tier, and the others,
// for httplimit.WithTiers; each is named after its tier.
func (c *Config) tiers(lim *core.Limiter) (*core.Limiter, []*core.Limiter, error) {
	first, err := lim.Tier(c.Tiers[0].Name, c.Tiers[0].Limit)
	if err != nil {
		return nil, nil, err
	}
	others := make([]*core.Limiter, 0, len(c.Tiers)-1)
	for _, t := range c.Tiers[1:] {
		tl, err := lim.Tier(t.Name, t.Limit)
		if err != nil {
			return nil, nil, err
		}
		others = append(others, tl)
	}
	return first, others, nil
}

// tiersString describes the tiers for the start line: "free 2/m (default),
// paid 5/m by claim plan".
func (c *Config) tiersString() string {
	parts := make([]string, len(c.Tiers))
	for i, t := range c.Tiers {
		parts[i] = t.Name + " " + t.Limit.String()
	}
	parts[0] += " (default)"
	return strings.Join(parts, ", ") + " by claim " + c.TierClaim
}
