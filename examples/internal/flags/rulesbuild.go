package flags

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// buildRules makes the rule set with -rules: its counters in st, every policy
// with the options the other flags ask for, its rules loaded from the file or
// from Redis and kept in step with it until Close.
func (s *Setup) buildRules(st core.Store) error {
	c := s.Config
	errLog := newErrorLog(c.errorWriter(), c.failMode())
	s.closers = append(s.closers, errLog)
	opts, err := c.rulesOptions(st, errLog)
	if err != nil {
		return err
	}
	if c.Metrics {
		obs, h, err := newMetrics(st, s.policiesInForce)
		if err != nil {
			return err
		}
		opts = append(opts, rules.WithObserver(obs))
		s.Metrics = h
	}
	if c.RulesSource == RulesFile {
		return s.watchFile(st, opts)
	}
	return s.watchRedis(st, opts)
}

// rulesOptions are the options of the rule set: the key functions the
// document's keys need (-trusted-proxies, -jwt-secret), the error log as an
// observer, the log of reloads, and the HTTP options every policy takes
// (-fail closed, -dry-run, -count-only-failures, /metrics never limited).
func (c *Config) rulesOptions(st core.Store, errLog *errorLog) ([]rules.Option, error) {
	ipKey, err := c.IPKey()
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(c.errorWriter(), &slog.HandlerOptions{ReplaceAttr: withoutTime}))
	opts := []rules.Option{
		rules.WithIPKey(ipKey),
		rules.WithObserver(errLog),
		rules.WithLogger(logger),
		rules.WithReloadHook(c.reloadHook(logger)),
		rules.WithHTTPOptions(c.rulesHTTPOptions()...),
	}
	if c.JWTSecret != "" {
		opts = append(opts, rules.WithClaimKey(c.ClaimKey))
	}
	return opts, nil
}

// withoutTime drops the time from the log lines, as the servers' other lines
// have none (a process supervisor stamps them).
func withoutTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// rulesHTTPOptions are the HTTP options every policy of the rules takes. What
// a policy's document says is applied after them: -fail closed and -dry-run
// make every policy fail closed or dry, whatever it says.
func (c *Config) rulesHTTPOptions() []httplimit.Option {
	var opts []httplimit.Option
	if c.Metrics {
		opts = append(opts, httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == MetricsPath }))
	}
	return append(opts, c.behaviourOptions()...)
}

// reloadHook logs what the rules package does not: a rules file loaded (it
// logs every refusal, and every load from Redis, itself), one line each; then
// it calls OnReload.
func (c *Config) reloadHook(logger *slog.Logger) func(rules.Reload) {
	return func(r rules.Reload) {
		if r.Err == nil && r.Source != rules.RedisSource {
			logger.Info("ratewarden: rules loaded", "source", r.Source, "version", r.Version)
		}
		if c.OnReload != nil {
			c.OnReload(r)
		}
	}
}

// watchFile loads the rules file into a new rule set and watches it: every
// change of the file is loaded, and SIGHUP (Setup.reload) reloads it.
func (s *Setup) watchFile(st core.Store, opts []rules.Option) error {
	path := s.Config.Rules
	doc, err := readRulesFile(path)
	if err != nil {
		return err
	}
	set, err := s.Config.newRuleSet(st, doc, path, opts)
	if err != nil {
		return err
	}
	w, err := rules.WatchFile(set, path)
	if err != nil {
		return err
	}
	s.Rules = set
	s.closers = append(s.closers, set, w) // the watcher stops first, then the set gives its leased tokens back
	s.reload = func(context.Context) error { return w.Reload() }
	return nil
}

// watchRedis loads the rules kept in Redis into a new rule set and keeps them
// in step: announcements of pushes, polls every -rules-poll, and SIGHUP
// (Setup.reload). With -rules-fallback the set starts with the file's rules,
// which the watcher replaces with Redis's at once when Redis gives them, and
// keeps (saying so) while it does not. Without it, the server does not start
// while Redis cannot give the rules.
func (s *Setup) watchRedis(st core.Store, opts []rules.Option) error {
	c := s.Config
	client := redis.NewUniversalClient(c.RulesRedisOptions)
	s.closers = append(s.closers, client)
	b, err := redisstore.NewRulesBackend(client)
	if err != nil {
		return err
	}
	var ropts []rules.RedisOption
	if c.RulesPoll > 0 {
		ropts = append(ropts, rules.WithRedisPollInterval(c.RulesPoll))
	}
	var doc *rules.Document
	if c.RulesFallback != "" {
		ropts = append(ropts, rules.WithFallbackFile(c.RulesFallback))
		doc, err = readRulesFile(c.RulesFallback)
	} else {
		doc, err = fetchRules(b)
	}
	if err != nil {
		return err
	}
	set, err := c.newRuleSet(st, doc, c.rulesName(), opts)
	if err != nil {
		return err
	}
	w, err := rules.WatchRedis(set, b, ropts...)
	if err != nil {
		return err
	}
	s.Rules = set
	s.closers = append(s.closers, set, w) // the watcher stops first, then the set gives its leased tokens back
	s.reload = w.Refresh
	return nil
}

// fetchRules reads the rules Redis holds, for a server started without
// -rules-fallback.
func fetchRules(b rules.RedisBackend) (*rules.Document, error) {
	ctx, cancel := context.WithTimeout(context.Background(), warmUpTimeout)
	defer cancel()
	raw, _, err := rules.FetchRules(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("%w\n(push the rules with ratewarden rules push FILE, or give -rules-fallback FILE to start with a file's rules until Redis gives them)", err)
	}
	return rules.Parse(raw, rules.RedisSource)
}

// readRulesFile reads and parses a rules file. A document with problems is
// an error that lists every one, a line each.
func readRulesFile(path string) (*rules.Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", rules.ErrFileUnreadable, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, rules.MaxDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", rules.ErrFileUnreadable, path, err)
	}
	return rules.Parse(raw, path)
}

// newRuleSet builds the rule set of doc, which came from source. A document
// that names a JWT claim without -jwt-secret is refused with a hint.
func (c *Config) newRuleSet(st core.Store, doc *rules.Document, source string, opts []rules.Option) (*rules.Set, error) {
	set, err := rules.New(st, doc, opts...)
	if err != nil && c.JWTSecret == "" && usesJWTClaim(doc) {
		return nil, fmt.Errorf("%s: %w (give -jwt-secret, the secret that verifies the tokens)", source, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return set, nil
}

// usesJWTClaim reports whether a policy of doc keys by a JWT claim or picks
// its tier by one.
func usesJWTClaim(doc *rules.Document) bool {
	for _, p := range doc.Policies {
		if p.Tiers != nil && p.Tiers.By.Kind == rules.KeyJWTClaim {
			return true
		}
		for _, part := range p.Key.Parts {
			if part.Kind == rules.KeyJWTClaim {
				return true
			}
		}
	}
	return false
}

// ReloadOnHangup reloads the rules on every SIGHUP until the function it
// returns is called: the file is read again, or the version in Redis. The
// outcome is logged as every reload is. Without -rules it does nothing.
func (s *Setup) ReloadOnHangup() (stop func()) {
	if s.reload == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case <-hup:
				ctx, cancel := context.WithTimeout(context.Background(), warmUpTimeout)
				_ = s.reload(ctx) // logged through the rules' logger and reload hook
				cancel()
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-ended
	}
}
