package flags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// StoreKind says where the limiter keeps its counts.
type StoreKind int

// The stores -store selects.
const (
	Memory StoreKind = iota
	Redis
	RedisCluster
	// RedisSentinel is a master found through Redis Sentinels
	// (redis-sentinel://).
	RedisSentinel
)

// Config is the parsed, validated flags.
type Config struct {
	Addr           string
	Limit          core.Limit
	Algorithm      core.Algorithm
	Key            string // "ip", "header:NAME" or "jwt"
	JWTSecret      string
	TrustedProxies []string
	Store          StoreKind
	RedisAddrs     []string // host:port, one for Redis, one or more for a cluster or Sentinels
	RedisDB        int
	// RedisOptions are the client options of a Redis -store, from
	// redisstore.ParseURL with the password (-redis-password-file or
	// $RATEWARDEN_REDIS_PASSWORD) and the CA (-redis-ca); nil for memory.
	RedisOptions *redis.UniversalOptions
	// RedisPasswordFile (-redis-password-file) and RedisCA (-redis-ca) add
	// to the URLs of -store and -rules: the password when a URL has none,
	// the CA of a TLS URL.
	RedisPasswordFile, RedisCA string
	FailClosed                 bool
	// DryRun decides and reports every request but denies none (-dry-run).
	DryRun bool
	// Metrics serves the Prometheus metrics on MetricsPath (-metrics).
	Metrics bool
	// TierClaim is the JWT claim that picks one of Tiers (-tier-claim); the
	// first tier is the default, and Limit is its limit.
	TierClaim string
	Tiers     []Tier
	// CountOnlyFailures gives back the cost of every response with a status
	// below 400 (-count-only-failures).
	CountOnlyFailures bool
	// SettleHeader is the response header that names each request's real
	// cost, settled after the response (-settle-header); "" for none.
	SettleHeader string
	// ErrorLog is where Build's setup writes the limiter's errors (a store
	// down or slow): os.Stderr when nil. Every error is accounted for: one
	// line per interval at most, and the errors left out are counted in a
	// line when the interval ends and when the setup is closed. With -rules,
	// every reload (taken or refused) and every trouble with the rules'
	// source is a line there too.
	ErrorLog io.Writer

	// Rules is -rules as given: a rules file, or a Redis URL; empty without
	// -rules.
	Rules string
	// RulesSource says where the rules come from; NoRules without -rules.
	RulesSource RulesSource
	// RulesAddrs (host:port, one for Redis, one or more for a cluster) and
	// RulesDB are the Redis of a Redis -rules.
	RulesAddrs []string
	RulesDB    int
	// RulesRedisOptions are the client options of a Redis -rules, as
	// RedisOptions are of -store.
	RulesRedisOptions *redis.UniversalOptions
	// redisPassword is $RATEWARDEN_REDIS_PASSWORD.
	redisPassword string
	// RulesPoll is -rules-poll: how often the rules' version in Redis is
	// read besides the announcements; 0 for rules.DefaultRedisPollInterval.
	RulesPoll time.Duration
	// RulesFallback is -rules-fallback: the rules file used while Redis
	// cannot give the rules at start.
	RulesFallback string
	// OnReload, when set, is called after every reload of the rules is
	// logged, taken or refused (rules.WithReloadHook): for tests, and for
	// programs that embed a Setup. It runs on the goroutine that loaded and
	// must not block.
	OnReload func(rules.Reload)
	// BlockFor is how long a client denied once is refused (-block-for);
	// 0 for no penalty box.
	BlockFor time.Duration
	// Clock, when set by a program that embeds a Setup (a test), is the
	// clock the limiter of -limit decides on (LimiterOptions); nil for the
	// system clock.
	Clock core.Clock
	// Concurrency is how many requests of one client may run at once
	// (-concurrency); 0 for no such limit.
	Concurrency int64
	// LeaseTokens is the most tokens of a hot client one Redis call leases
	// (-lease, core.TokenLease's Max); 0 for no token lease.
	LeaseTokens int64
	// LeaseTTL is how long a leased token may be spent (-lease-ttl).
	LeaseTTL time.Duration
}

// KeyFunc returns the key function -key (and -trusted-proxies, -jwt-secret)
// describe.
func (c *Config) KeyFunc() (keyfuncs.Func, error) {
	switch {
	case c.Key == "jwt":
		return jwtkey.Subject(jwtkey.WithHMACSecret([]byte(c.JWTSecret)))
	case strings.HasPrefix(c.Key, "header:"):
		return keyfuncs.Header(strings.TrimPrefix(c.Key, "header:"))
	default:
		return c.IPKey()
	}
}

// failMode says what happens when the store fails: "open" or "closed", and
// with -rules and -fail open, what each policy says.
func (c *Config) failMode() string {
	switch {
	case c.FailClosed:
		return "closed"
	case c.RulesSource != NoRules:
		return "open unless its policy says closed"
	}
	return "open"
}

// Setup is what an example server needs to run: the store, and with -rules
// the rules; the server's main.go makes the one policy's limiter on the
// store, with Config's algorithm, limit and key and Policy's options, as an
// app does.
type Setup struct {
	// Name is the server's name, as its messages start.
	Name   string
	Config *Config
	// Limiter and Options are the one policy as the servers' main.go makes
	// it (core.NewLimiter, Config.KeyFunc, Policy), for the tests and for
	// programs that embed a Setup; nil with -rules.
	Limiter *core.Limiter
	Options []httplimit.Option
	// Rules is the rules in force with -rules, kept in step with the file or
	// with Redis until Close; nil without -rules.
	Rules *rules.Set
	// Metrics serves the Prometheus metrics, for MetricsPath; nil without
	// -metrics.
	Metrics http.Handler
	// Store keeps the counters: memory.New's, or redisstore.New's on a
	// go-redis client of the options redisstore.ParseURL read from -store
	// (warmed up, following resets, and closed by Close).
	Store core.Store
	// errLog writes the limiter's errors; observer is the metrics' (nil
	// without -metrics).
	errLog   *errorLog
	observer httplimit.Observer
	closers  []io.Closer
	// reload reloads the rules now (SIGHUP); nil without -rules.
	reload func(context.Context) error
	// tracked are the policies Policy made (without -rules), for the
	// metrics and the give-back of leased tokens at shutdown.
	tracked *policyList
}

// Handler returns what the adapter's Middleware runs on every request: the
// rules with -rules, otherwise the one policy of Limiter and Options.
func (s *Setup) Handler() (httplimit.Handler, error) {
	if s.Rules != nil {
		return s.Rules, nil
	}
	return httplimit.New(s.Limiter, s.Options...)
}

// Close gives back the unspent tokens of the policies' token leases (-lease,
// a rules policy's lease_tokens) within a second, writes the errors the
// error log left out since its last line, and releases the store (and its
// client).
func (s *Setup) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i].Close())
	}
	return errors.Join(errs...)
}

// Listen opens the listener on -addr and reports the address it got (which
// matters for :0) as "listening on http://ADDR" on w.
func (s *Setup) Listen(w io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", s.Config.Addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s; listening on http://%s\n", s, ln.Addr())
	return ln, nil
}

// String describes the setup for the start line: its Config, and with -rules
// the version and policies of the rules in force.
func (s *Setup) String() string {
	if s.Rules == nil {
		return s.Config.String()
	}
	doc := s.Rules.Document()
	return fmt.Sprintf("%s (version %d, %d policies)", s.Config, doc.Version, len(doc.Policies))
}

// String describes the configuration for the start line: "gcra with 10/s on
// memory, key ip, failing open", and then dry run, metrics and count only
// failures when they are on.
func (c *Config) String() string {
	var parts []string
	if c.RulesSource != NoRules {
		parts = []string{fmt.Sprintf("%s, counters on %s", c.rulesName(), c.storeName()), "failing " + c.failMode()}
	} else {
		limits := c.Limit.String()
		if len(c.Tiers) > 0 {
			limits = "tiers " + c.tiersString()
		}
		parts = []string{fmt.Sprintf("%s with %s on %s", c.Algorithm, limits, c.storeName()), "key " + c.Key, "failing " + c.failMode()}
	}
	if c.DryRun {
		parts = append(parts, "dry run (nothing denied)")
	}
	if c.Metrics {
		parts = append(parts, "metrics on "+MetricsPath)
	}
	if c.CountOnlyFailures {
		parts = append(parts, "counting only failures (status 400 and up)")
	}
	if c.SettleHeader != "" {
		parts = append(parts, "settling each request's cost to its response's "+c.SettleHeader)
	}
	if c.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("at most %d requests of a client running at once", c.Concurrency))
	}
	if s := c.leaseString(); s != "" {
		parts = append(parts, s)
	}
	if s := c.blockString(); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func (c *Config) storeName() string {
	switch c.Store {
	case Redis:
		return "redis " + c.RedisAddrs[0]
	case RedisCluster:
		return "redis cluster " + strings.Join(c.RedisAddrs, ",")
	case RedisSentinel:
		return "redis master " + c.RedisOptions.MasterName + " of sentinels " + strings.Join(c.RedisAddrs, ",")
	}
	return "memory"
}

// Build makes the store, the limiter (with its tiers) and the HTTP options
// from c, and the metrics handler under -metrics.
func (c *Config) Build() (*Setup, error) {
	st, closer, err := c.newStore()
	if err != nil {
		return nil, err
	}
	s := &Setup{Config: c, Store: st, closers: []io.Closer{closer}, tracked: &policyList{}}
	build := s.build
	if c.RulesSource != NoRules {
		build = s.buildRules
	}
	if err := build(st); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// build makes the error log, the metrics and the one policy on st: the
// limiter, core.NewLimiter's with -algorithm and -limit, and the options of
// -key and the other flags, as every example server's main.go makes them.
func (s *Setup) build(st core.Store) error {
	c := s.Config
	s.errLog = newErrorLog(c.errorWriter(), c.failMode())
	s.closers = append(s.closers, s.errLog, leaseReturner{s})
	if c.Metrics {
		obs, h, err := newMetrics(st, s.policiesInForce)
		if err != nil {
			return err
		}
		s.observer, s.Metrics = obs, h
	}
	lim, err := core.NewLimiter(st, c.Algorithm, c.Limit, c.LimiterOptions()...)
	if err != nil {
		return err
	}
	key, err := c.KeyFunc()
	if err != nil {
		return err
	}
	lim, opts, err := s.Policy(lim)
	if err != nil {
		return err
	}
	s.Limiter, s.Options = lim, append([]httplimit.Option{httplimit.WithKey(key)}, opts...)
	return nil
}

// Load parses args and builds the setup. It returns the exit status to use
// when it fails: 2 for bad flags (the message is written to stderr), 0 for
// -h, 1 when the store cannot be made.
func Load(name string, args []string, stderr io.Writer) (*Setup, int) {
	c, err := Parse(name, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", name, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		fmt.Fprintf(stderr, "run %s -h for the flags\n", name)
		return nil, 2
	}
	s, err := c.Build()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, redisstore.ExplainError(err))
		return nil, 1
	}
	s.Name = name
	return s, 0
}

// Check ends the program with status 1 and the error when err is not nil
// (building the middleware failed).
func (s *Setup) Check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
		_ = s.Close()
		os.Exit(1)
	}
}

// Run opens the listener on -addr (see Listen), serves on it until SIGINT or
// SIGTERM, then shuts the server down; it ends the program with status 1
// when the listener cannot be opened. With -rules, SIGHUP reloads the rules
// meanwhile. serve and shutdown are the framework's
// own, e.g. an http.Server's Serve and Shutdown.
func (s *Setup) Run(serve func(net.Listener) error, shutdown func(context.Context) error) {
	ln, err := s.Listen(os.Stderr)
	s.Check(err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer s.ReloadOnHangup()()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		_ = shutdown(context.Background())
	}()
	if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
	}
	if ctx.Err() != nil {
		<-shut // the requests running end before Close gives leased tokens back
	}
}

// MustLoad is Load on the command line: it exits with Load's status when it
// fails.
func MustLoad(name string) *Setup {
	s, code := Load(name, os.Args[1:], os.Stderr)
	if s == nil {
		os.Exit(code)
	}
	return s
}
