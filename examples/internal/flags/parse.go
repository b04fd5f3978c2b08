package flags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// errUsage marks an error in the flags (exit status 2).
var errUsage = errors.New("bad flags")

// usageErr formats a bad-flags error, which wraps errUsage.
func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// Parse reads args (without the program name) into a Config, checking every
// value. Errors wrap flag.ErrHelp for -h, or describe the bad flag.
func Parse(name string, args []string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), usageText, name)
		fs.PrintDefaults()
	}
	r := rawFlags{set: map[string]bool{}}
	r.define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, usageErr("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { r.set[f.Name] = true })
	return r.config()
}

// usageText heads -h, before the flags: the routes every example server
// answers, with and without -rules.
const usageText = `usage: %s [flags]

A server behind ratewarden's middleware. Its routes:
  GET  /         200 "ok"
  POST /login    200 for the form field password=` + DemoPassword + `, 401 for any other
                 (the failures -count-only-failures counts)
  GET  /healthz  200, never limited
  GET  /metrics  the Prometheus metrics, with -metrics; never limited
  GET  /tokens?n=K  200 with the header X-Cost: K (K from 0 to 1000000; 400 for another),
                 the cost -settle-header X-Cost settles each request at
  GET  /slow?ms=N  200 after N ms (N from 0 to 10000; 400 for another): a request
                 that runs a while, for -concurrency to count
  anything else  404

With -rules, the rules document decides which requests are limited and how
(see examples/rules.yaml), and the routes are those of a small API:
  GET  /                  200 "ok"
  GET  /api/items         200, the items
  POST /api/items         201, an item created
  GET  /api/items/{id}    200, the item
  DELETE /api/items/{id}  200, the item deleted
  POST /login             200 with the header X-Password: ` + RulesPassword + `, 401 without
  GET  /healthz           200 (the rules exempt it)
  GET  /tokens?n=K        200 with the header X-Cost: K (see above)
  GET  /slow?ms=N         200 after N ms (see above)
  GET  /metrics           the Prometheus metrics, with -metrics; never limited
  anything else           404
-limit, -burst, -algorithm, -key, -tier-claim, -tier, -tz and -anchor-day do not go with -rules,
nor -block-for, -concurrency and -lease: the document says each per policy (its limits, key,
tiers, time_zone, anchor_day, block_for, concurrency, lease_tokens and lease_ttl).

-store and -rules take a Redis URL (a managed Redis's too):
  redis://[user:password@]host:port[/db][?options]     a server
  redis-cluster://[user:password@]host:port,host:port   a Redis Cluster
  redis-sentinel://[user:password@]host:port,.../master[/db]
                                                        a master found by Sentinels
  rediss://, rediss-cluster://, rediss-sentinel://      the same over TLS, the
                                                        certificate always checked
The options are go-redis's (dial_timeout=2s, read_timeout, pool_size, ...). Keep
the password off the command line: give the user in the URL and the password in
$` + envRedisPassword + ` or in -redis-password-file FILE (a password in the URL
wins); -redis-ca FILE trusts a private CA. No message shows a password.

Flags:
`

// rawFlags is the flags as given, before they are checked.
type rawFlags struct {
	addr, limit, alg, key, secret, proxies, store, fail string
	burst                                               int64
	dryRun, metrics, countOnlyFailures                  bool
	tierClaim                                           string
	tiers                                               []string
	tz                                                  string // -tz (calendar.go)
	anchorDay                                           int    // -anchor-day
	rules, rulesFallback                                string
	redisPasswordFile, redisCA                          string
	rulesPoll                                           time.Duration
	settleHeader                                        string
	blockFor                                            time.Duration // -block-for (block.go)
	// set holds the names of the flags given on the command line.
	set         map[string]bool
	concurrency int64         // -concurrency (inflight.go)
	lease       int64         // -lease (lease.go)
	leaseTTL    time.Duration // -lease-ttl
}

// define declares the flags on fs, with their defaults and help, to be read
// into r.
func (r *rawFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&r.addr, "addr", ":8080", "address to listen on (127.0.0.1:0 picks a free port)")
	fs.StringVar(&r.limit, "limit", "10/s", "the limit, RATE/PERIOD: 10/s, 100/m, 5/30s; or a calendar quota, N/month, N/week or\nN/day, counted per calendar window in -tz (with -algorithm fixed-window or sliding-window)")
	fs.Int64Var(&r.burst, "burst", 0, "the burst for token-bucket, leaky-bucket and gcra (0: the rate)")
	r.defineCalendar(fs)
	fs.StringVar(&r.alg, "algorithm", "gcra", "token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window or gcra")
	fs.StringVar(&r.key, "key", "ip", "who a client is: ip, header:NAME or jwt")
	fs.StringVar(&r.secret, "jwt-secret", "", "HMAC secret verifying HS256 tokens for -key jwt, and for the jwt_claim keys and tiers\nof -rules (at least 32 bytes)")
	fs.StringVar(&r.proxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed (-key ip,\nand the ip keys of -rules)")
	fs.StringVar(&r.store, "store", "memory", "where the counters are kept: memory, "+redisstore.URLForms)
	fs.StringVar(&r.fail, "fail", "open", "when the store fails: open (let requests through) or closed (503);\nwith -rules, closed makes every policy fail closed, open lets each do as it says")
	fs.BoolVar(&r.dryRun, "dry-run", false, "decide, count and report every request, but deny none: every request goes on,\nwith rate-limit headers that tell the truth (RateLimit r=0 past the limit);\nwith -rules, every policy is dry")
	fs.BoolVar(&r.metrics, "metrics", false, "serve the Prometheus metrics on GET "+MetricsPath+" (never limited)")
	fs.StringVar(&r.tierClaim, "tier-claim", "", "with -key jwt: the `CLAIM` of the token that names its tier among the -tier flags;\na token without it, or naming no tier, gets the first")
	fs.Func("tier", "a tier for -tier-claim, `NAME=LIMIT`, repeated, e.g. -tier free=10/m -tier paid=100/m;\nthe first is the default and replaces -limit; RateLimit-Policy names the tier", func(s string) error {
		r.tiers = append(r.tiers, s)
		return nil
	})
	fs.BoolVar(&r.countOnlyFailures, "count-only-failures", false, "count only failures: a response with a status below 400 gives its cost back\n(try POST "+LoginPath+" with a wrong password); with -rules, in every policy")
	r.defineSettle(fs)
	r.defineInFlight(fs)
	r.defineLease(fs)
	r.defineBlock(fs)
	r.defineRules(fs)
	r.defineRedis(fs)
}

// defineRules declares -rules, -rules-poll and -rules-fallback on fs.
func (r *rawFlags) defineRules(fs *flag.FlagSet) {
	fs.StringVar(&r.rules, "rules", "", "the rules document, in place of -limit, -algorithm, -key and the tiers: a `FILE`\n(watched: an edit takes effect without a restart; SIGHUP reloads it), or the rules\nkept in Redis, "+redisstore.URLForms+"\n(pushed with ratewarden rules push; a push takes effect on every server at once)")
	fs.DurationVar(&r.rulesPoll, "rules-poll", rules.DefaultRedisPollInterval, "with a Redis -rules: how often the rules' version is read besides the announcements\nof pushes, which may be lost (from 10ms to 24h)")
	fs.StringVar(&r.rulesFallback, "rules-fallback", "", "with a Redis -rules: the rules `FILE` used while Redis cannot give the rules at start\n(down, or no rules pushed yet); without it the server does not start then")
}

// config checks every flag in r, in the order they are documented, and
// returns the Config they describe.
func (r *rawFlags) config() (*Config, error) {
	c := &Config{Addr: r.addr, Key: r.key, JWTSecret: r.secret}
	if err := checkAddr(r.addr); err != nil {
		return nil, err
	}
	c.RedisPasswordFile, c.RedisCA, c.redisPassword = r.redisPasswordFile, r.redisCA, os.Getenv(envRedisPassword)
	if err := c.parseRules(r); err != nil {
		return nil, err
	}
	if c.RulesSource != NoRules {
		c.Key = ""
		if err := c.parseRulesKeys(r.secret, r.proxies); err != nil {
			return nil, err
		}
	} else if err := r.checkPolicy(c); err != nil {
		return nil, err
	}
	if err := c.parseStore(r.store); err != nil {
		return nil, err
	}
	if err := c.checkRedisFlags(); err != nil {
		return nil, err
	}
	if err := c.parseFail(r.fail); err != nil {
		return nil, err
	}
	c.DryRun, c.Metrics, c.CountOnlyFailures = r.dryRun, r.metrics, r.countOnlyFailures
	if err := c.parseSettle(r); err != nil {
		return nil, err
	}
	if err := c.parseInFlight(r); err != nil {
		return nil, err
	}
	if err := c.parseLease(r); err != nil {
		return nil, err
	}
	if err := c.parseBlock(r); err != nil {
		return nil, err
	}
	return c, nil
}

// checkPolicy checks the flags of the one policy a server without -rules
// has: -limit, -burst, -algorithm, -key and the flags that go with it, and
// the tiers.
func (r *rawFlags) checkPolicy(c *Config) error {
	if err := c.parseLimit(r.limit, r.burst, r.alg); err != nil {
		return err
	}
	if err := c.parseKey(r.key, r.secret, r.proxies); err != nil {
		return err
	}
	if err := c.parseTiers(r.tierClaim, r.tiers, r.set); err != nil {
		return err
	}
	if err := c.parseCalendar(r); err != nil {
		return err
	}
	// Build the key functions once here, so that their own checks (header
	// name, CIDRs, secret length, claim name) are reported as bad flags too.
	if _, err := c.KeyFunc(); err != nil {
		return usageErr("-key %s: %v", r.key, err)
	}
	if c.TierClaim != "" {
		if _, err := c.TierPick(); err != nil {
			return usageErr("-tier-claim %q: %v", c.TierClaim, err)
		}
	}
	return nil
}

// checkAddr checks -addr: HOST:PORT or :PORT, the port from 0 to 65535.
func checkAddr(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return usageErr("-addr %q: want HOST:PORT or :PORT", addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usageErr("-addr %q: port must be a number from 0 to 65535", addr)
	}
	return nil
}

// parseLimit sets c.Limit and c.Algorithm from -limit, -burst and
// -algorithm, checking that the algorithm takes that limit.
func (c *Config) parseLimit(limit string, burst int64, alg string) error {
	l, err := core.ParseLimit(limit)
	if err != nil {
		return usageErr("-limit: %v", err)
	}
	if burst < 0 {
		return usageErr("-burst must not be negative, got %d", burst)
	}
	if burst > 0 {
		l = l.WithBurst(burst)
	}
	c.Limit = l
	if c.Algorithm, err = core.ParseAlgorithm(alg); err != nil {
		return usageErr("-algorithm: %v", err)
	}
	if err := c.Algorithm.ValidateLimit(l); err != nil {
		return usageErr("-limit/-burst with -algorithm %s: %v", c.Algorithm, err)
	}
	return nil
}

// parseKey checks -key and the flags that go with one kind of key only,
// -jwt-secret and -trusted-proxies, and sets c.TrustedProxies.
func (c *Config) parseKey(key, secret, proxies string) error {
	switch {
	case key == "ip", key == "jwt":
	case strings.HasPrefix(key, "header:") && len(key) > len("header:"):
	default:
		return usageErr("-key %q: want ip, header:NAME (e.g. header:X-API-Key) or jwt", key)
	}
	if key == "jwt" && secret == "" {
		return usageErr("-key jwt needs -jwt-secret")
	}
	if key != "jwt" && secret != "" {
		return usageErr("-jwt-secret is only used with -key jwt")
	}
	if proxies != "" {
		if key != "ip" {
			return usageErr("-trusted-proxies is only used with -key ip")
		}
		for _, p := range strings.Split(proxies, ",") {
			c.TrustedProxies = append(c.TrustedProxies, strings.TrimSpace(p))
		}
	}
	return nil
}

// parseFail sets c.FailClosed from -fail: open or closed.
func (c *Config) parseFail(fail string) error {
	switch fail {
	case "open":
	case "closed":
		c.FailClosed = true
	default:
		return usageErr("-fail %q: want open or closed", fail)
	}
	return nil
}

// parseStore sets c.Store, c.RedisOptions, c.RedisAddrs and c.RedisDB from
// -store: memory, or a Redis URL as redisstore.ParseURL reads it.
func (c *Config) parseStore(s string) error {
	if s == "memory" {
		c.Store = Memory
		return nil
	}
	if !isRedisURL(s) {
		return usageErr("-store %q: unknown store (want memory, %s)", redisstore.RedactURL(s), redisstore.URLForms)
	}
	opts, err := c.parseRedisURL("-store", s)
	if err != nil {
		return err
	}
	c.Store, c.RedisOptions, c.RedisAddrs, c.RedisDB = Redis, opts, opts.Addrs, opts.DB
	switch {
	case opts.IsClusterMode:
		c.Store = RedisCluster
	case opts.MasterName != "":
		c.Store = RedisSentinel
	}
	return nil
}
