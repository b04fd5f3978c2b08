package flags

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// RulesSource says where -rules takes the rules from.
type RulesSource int

// The sources -rules names.
const (
	// NoRules: no -rules; -limit, -algorithm and -key give the one policy.
	NoRules RulesSource = iota
	// RulesFile: a rules file, watched and loaded on every change.
	RulesFile
	// RulesRedis: the rules kept in a Redis server, or in the master that
	// Sentinels name (ratewarden rules push).
	RulesRedis
	// RulesRedisCluster: the rules kept in a Redis Cluster.
	RulesRedisCluster
)

// The bounds of -rules-poll: those of rules.WithRedisPollInterval, checked here so
// that a bad value is a bad flag.
const (
	minRulesPoll = 10 * time.Millisecond
	maxRulesPoll = 24 * time.Hour
)

// rulesReplaces are the flags -rules takes the place of: the document gives
// every policy its limits, algorithm, key and tiers.
var rulesReplaces = []string{"limit", "burst", "algorithm", "key", "tier-claim", "tier", "tz", "anchor-day"}

// rulesRedisOnly are the flags that only a Redis -rules takes.
var rulesRedisOnly = []string{"rules-poll", "rules-fallback"}

// parseRules sets c.Rules, c.RulesSource and, for Redis, c.RulesAddrs and
// c.RulesDB, c.RulesPoll and c.RulesFallback from -rules, -rules-poll and
// -rules-fallback, checking that -rules comes without the flags it replaces
// and the Redis-only flags only with a Redis -rules.
func (c *Config) parseRules(r *rawFlags) error {
	if !r.set["rules"] {
		for _, name := range rulesRedisOnly {
			if r.set[name] {
				return usageErr("-%s is only used with -rules redis://... or redis-cluster://...", name)
			}
		}
		return nil
	}
	for _, name := range rulesReplaces {
		if r.set[name] {
			return usageErr("-rules and -%s: the rules document gives every policy its limits, algorithm, key and tiers; give one or the other", name)
		}
	}
	c.Rules = r.rules
	if !isRedisURL(r.rules) {
		for _, name := range rulesRedisOnly {
			if r.set[name] {
				return usageErr("-%s is only used with a Redis -rules (%s): a rules file is watched, and reloaded on SIGHUP", name, redisstore.URLForms)
			}
		}
		c.RulesSource = RulesFile
		return checkRulesFile("-rules", r.rules)
	}
	opts, err := c.parseRedisURL("-rules", r.rules)
	if err != nil {
		return err
	}
	c.RulesSource, c.RulesRedisOptions, c.RulesAddrs, c.RulesDB = RulesRedis, opts, opts.Addrs, opts.DB
	if opts.IsClusterMode {
		c.RulesSource = RulesRedisCluster
	}
	if r.set["rules-poll"] {
		if r.rulesPoll < minRulesPoll || r.rulesPoll > maxRulesPoll {
			return usageErr("-rules-poll %s: want from %s to %s", r.rulesPoll, minRulesPoll, maxRulesPoll)
		}
		c.RulesPoll = r.rulesPoll
	}
	if r.set["rules-fallback"] {
		if err := checkRulesFile("-rules-fallback", r.rulesFallback); err != nil {
			return err
		}
		c.RulesFallback = r.rulesFallback
	}
	return nil
}

// checkRulesFile checks that the rules file path names a regular file. What
// it holds is checked when it is loaded, with every problem reported.
func checkRulesFile(flagName, path string) error {
	if path == "" {
		return usageErr("%s: want a rules file or %s", flagName, redisstore.URLForms)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageErr("%s %s: no such file", flagName, path)
	case err != nil:
		return usageErr("%s %s: %v", flagName, path, err)
	case !info.Mode().IsRegular():
		return usageErr("%s %s: not a regular file", flagName, path)
	}
	return nil
}

// parseRulesKeys checks the flags that configure the keys a rules document
// names: -jwt-secret verifies the tokens of its jwt_claim keys and tiers,
// -trusted-proxies says who the client is for its ip keys.
func (c *Config) parseRulesKeys(secret, proxies string) error {
	if secret != "" {
		if _, err := c.ClaimKey("sub"); err != nil {
			return usageErr("-jwt-secret: %v", err)
		}
	}
	if proxies != "" {
		for _, p := range strings.Split(proxies, ",") {
			c.TrustedProxies = append(c.TrustedProxies, strings.TrimSpace(p))
		}
		if _, err := c.IPKey(); err != nil {
			return usageErr("-trusted-proxies: %v", err)
		}
	}
	return nil
}

// ClaimKey returns the key function of a JWT claim, for the jwt_claim keys
// and tiers of a rules document: the claim of a token verified with
// -jwt-secret (HS256).
func (c *Config) ClaimKey(claim string) (keyfuncs.Func, error) {
	return jwtkey.Subject(jwtkey.WithHMACSecret([]byte(c.JWTSecret)), jwtkey.WithClaim(claim))
}

// IPKey returns the key function of the client IP: the peer address, or the
// forwarded client when the peer is one of -trusted-proxies.
func (c *Config) IPKey() (keyfuncs.Func, error) {
	if len(c.TrustedProxies) > 0 {
		return keyfuncs.IP(keyfuncs.WithTrustedProxies(c.TrustedProxies...))
	}
	return keyfuncs.IP()
}

// rulesName describes where the rules come from, for the start line:
// "rules rules.yaml", "rules in redis 127.0.0.1:6379".
func (c *Config) rulesName() string {
	switch c.RulesSource {
	case RulesRedis:
		if m := c.RulesRedisOptions.MasterName; m != "" {
			return fmt.Sprintf("rules in redis master %s of sentinels %s db %d", m, strings.Join(c.RulesAddrs, ","), c.RulesDB)
		}
		return fmt.Sprintf("rules in redis %s db %d", c.RulesAddrs[0], c.RulesDB)
	case RulesRedisCluster:
		return "rules in redis cluster " + strings.Join(c.RulesAddrs, ",")
	}
	return "rules " + c.Rules
}
