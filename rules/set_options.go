package rules

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Option configures a Set (see New). Options say what the document cannot:
// how to verify a JWT, which Go value a context key is, which proxies to
// trust, who observes the decisions.
type Option func(*config) error

// config is what the options set: everything a compile needs besides the
// document and the store.
type config struct {
	ipKey       keyfuncs.Func
	claimKey    func(claim string) (keyfuncs.Func, error)
	contextKeys map[string]any
	observers   []httplimit.Observer
	logger      *slog.Logger
	clock       core.Clock
	httpOpts    []httplimit.Option
	reloadHook  func(Reload)
	// leaseReturnTimeout bounds a give-back of leased tokens
	// (WithLeaseReturnTimeout); 0 is DefaultLeaseReturnTimeout.
	leaseReturnTimeout time.Duration
}

// Reload is what the reload hook hears after every Load or Replace: the
// document's source, version and digest, and the error that kept it out (nil
// when it took effect).
type Reload struct {
	// Source names where the document came from: a file path, "redis".
	Source string
	// Version is the version of the document that was loaded, or, when
	// Err is set, of the document still in force.
	Version int64
	// Digest is that document's digest (Document.Digest): with Version,
	// what every instance of a fleet should report alike.
	Digest string
	// Err is why the document was refused; the rules in force stayed.
	Err error
}

// WithIPKey sets the key function of the "ip" key: keyfuncs.IP with the
// trusted proxies of the deployment, typically. The default is keyfuncs.IP()
// (the peer address, no proxy trusted).
func WithIPKey(f keyfuncs.Func) Option {
	return func(c *config) error {
		if f == nil {
			return nilOption("WithIPKey function")
		}
		c.ipKey = f
		return nil
	}
}

// WithClaimKey sets how a "jwt_claim" key or tier is read: f returns the key
// function of the claim it is given, verifying the token (keyfuncs/jwtkey's
// Subject with jwtkey.WithClaim(claim) and the application's keys). A document
// that names a JWT claim is refused without it: the rules package never
// reads an unverified token on its own.
func WithClaimKey(f func(claim string) (keyfuncs.Func, error)) Option {
	return func(c *config) error {
		if f == nil {
			return nilOption("WithClaimKey function")
		}
		c.claimKey = f
		return nil
	}
}

// WithContextValueKey gives the Go value a "context: name" key or tier looks
// up: the request context's value under key (context.Value). Without it, the
// name itself is the lookup key, which is where Gin's and Echo's c.Set and
// Fiber's c.Locals put values. (In this package a bare "key" is the
// rate-limit key a policy counts by; this option names the context's own.)
func WithContextValueKey(name string, key any) Option {
	return func(c *config) error {
		if name == "" || key == nil {
			return fmt.Errorf("%w: WithContextValueKey needs a name and a key", core.ErrInvalidOption)
		}
		if c.contextKeys == nil {
			c.contextKeys = map[string]any{}
		}
		c.contextKeys[name] = key
		return nil
	}
}

// WithObserver adds an observer of every decision of every policy (see
// httplimit.WithObserver); events name the policy, or policy/tier.
func WithObserver(o httplimit.Observer) Option {
	return func(c *config) error {
		if o == nil {
			return nilOption("observer")
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// WithLogger sets where refused reloads and the policies' errors are logged
// (slog.Default() otherwise).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return nilOption("logger")
		}
		c.logger = l
		return nil
	}
}

// WithClock sets the clock of every policy's limiter (core.WithClock).
func WithClock(clk core.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return nilOption("clock")
		}
		c.clock = clk
		return nil
	}
}

// WithHTTPOptions adds httplimit options to every policy: headers, store
// timeout, responders, key fallback. What the document says (key, tiers, dry
// run, fail mode, refunds, overrides) is applied after them and wins.
func WithHTTPOptions(opts ...httplimit.Option) Option {
	return func(c *config) error {
		for _, o := range opts {
			if o == nil {
				return nilOption("httplimit option")
			}
		}
		c.httpOpts = append(c.httpOpts, opts...)
		return nil
	}
}

// WithReloadHook calls f after every Load and Replace, whether the document
// took effect or was refused. f runs on the goroutine that loaded and must not
// block.
func WithReloadHook(f func(Reload)) Option {
	return func(c *config) error {
		if f == nil {
			return nilOption("reload hook")
		}
		c.reloadHook = f
		return nil
	}
}

func nilOption(what string) error {
	return fmt.Errorf("%w: nil %s", core.ErrInvalidOption, what)
}

// log returns the logger to use now.
func (c *config) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}
