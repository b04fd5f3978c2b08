package luascript

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = "ratewarden:"

// DefaultLocalCacheSize is the number of denied requests the local cache holds
// unless WithLocalCache says otherwise.
const DefaultLocalCacheSize = 16384

// Settings are what a user of either Redis binding may set.
type Settings struct {
	Config
	// CacheSize is how many denials the local cache holds; 0 turns it off.
	CacheSize int
}

// Option sets one of the Settings. The Redis bindings take these options
// (they re-export the constructors under their own names).
type Option func(*Settings) error

// WithPrefix starts every key with prefix instead of DefaultPrefix. The prefix
// may not hold '{' or '}' (they would move the hash tag).
func WithPrefix(prefix string) Option {
	return func(s *Settings) error {
		s.Prefix = prefix
		return nil
	}
}

// WithCallerClock makes the scripts decide at TakeRequest.Now (the limiter's
// clock) instead of the Redis server's TIME. Use it when the Redis service
// refuses TIME inside scripts (some managed services do), or in tests that move
// a manual clock. The application servers' clocks then define the windows: a
// server whose clock is ahead or behind by d shifts its view of every window by
// d, so skew between instances loosens or tightens the limit by up to d's worth
// of quota. Redis still expires keys on its own clock; see WithMinTTL.
func WithCallerClock() Option {
	return func(s *Settings) error {
		s.CallerClock = true
		return nil
	}
}

// WithMinTTL sets a floor on the time to live of every key (default 0: a key
// expires exactly when its state equals a fresh one). In caller-clock mode, a
// caller clock that runs slower than Redis's (a manual clock in tests) would
// otherwise let Redis expire state the caller still needs.
func WithMinTTL(d time.Duration) Option {
	return func(s *Settings) error {
		s.MinTTL = d
		return nil
	}
}

// WithLocalCache sets how many denied requests the store remembers locally
// (default DefaultLocalCacheSize; 0 turns the cache off). While a remembered
// denial's RetryAfter runs, the same request (same namespace, key, algorithm,
// limits and cost) is denied again without a round trip to Redis; see
// DenyCache for why this never admits more than Redis would.
func WithLocalCache(size int) Option {
	return func(s *Settings) error {
		if size < 0 || size > 1<<24 {
			return fmt.Errorf("%w: local cache size %d out of [0, %d]", core.ErrInvalidOption, size, 1<<24)
		}
		s.CacheSize = size
		return nil
	}
}

// Backend is the client-specific half of a Redis store: how one client sends a
// decision's script call and deletes keys.
type Backend interface {
	// Eval sends req's script call once (EVALSHA, then EVAL only after a
	// NOSCRIPT reply, which means the script did not run) and returns the
	// reply. It must never send the call again once it may have reached the
	// server: a replay would count the request twice. Errors from Redis wrap
	// the binding's own sentinel; a request that does not encode returns
	// Config's error as it is.
	Eval(ctx context.Context, cfg *Config, req core.TakeRequest) ([]int64, error)
	// Del deletes keys.
	Del(ctx context.Context, keys []string) error
}

// Front is the client-independent half of a Redis store: its settings, its
// local cache of denials, and the flow of Take and Reset around a Backend. It
// is safe for concurrent use.
type Front struct {
	settings Settings
	cache    *DenyCache
	name     string
	errRedis error
	now      func() time.Time
}

// NewFront applies opts over the defaults and validates them. name prefixes
// the errors ("redisstore"); errRedis is the binding's sentinel for a Redis
// that could not decide.
func NewFront(name string, errRedis error, opts ...Option) (*Front, error) {
	f := &Front{
		settings: Settings{Config: Config{Prefix: DefaultPrefix}, CacheSize: DefaultLocalCacheSize},
		name:     name, errRedis: errRedis, now: time.Now,
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%s: %w: nil option", name, core.ErrInvalidOption)
		}
		if err := o(&f.settings); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := f.settings.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.settings.CacheSize > 0 {
		f.cache = NewDenyCache(f.settings.CacheSize)
	}
	return f, nil
}

// Settings returns the settings in force.
func (f *Front) Settings() Settings { return f.settings }

// Cache returns the local cache of denials, nil when it is off.
func (f *Front) Cache() *DenyCache { return f.cache }

// Take decides req through b in one round trip, or from the local cache of
// denials without one. Invalid requests return the error core would (wrapping
// core's sentinels) without calling Redis.
func (f *Front) Take(ctx context.Context, req core.TakeRequest, b Backend) (core.Decision, error) {
	var at time.Time
	if f.cache != nil && req.Cost > 0 {
		at = f.localNow(req)
		if d, ok := f.cache.Get(req, at); ok {
			return d, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", f.errRedis, err)
	}
	vals, err := b.Eval(ctx, &f.settings.Config, req)
	if err != nil {
		if errors.Is(err, f.errRedis) {
			return core.Decision{}, err
		}
		return core.Decision{}, fmt.Errorf("%s: %w", f.name, err) // the request did not encode
	}
	d, err := Decode(req, vals)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", f.errRedis, err)
	}
	if f.cache != nil && req.Cost > 0 && !d.Allowed {
		f.cache.Put(req, at, d)
	}
	return d, nil
}

// localNow is the instant a cached denial is measured from: the caller's time
// in caller-clock mode, else the local clock read before the call is sent (so
// a cached denial ends no later than Redis's).
func (f *Front) localNow(req core.TakeRequest) time.Time {
	if f.settings.CallerClock {
		return req.Now
	}
	return f.now()
}

// Reset forgets req's key under req's algorithm and limits (req.Cost and
// req.Now are ignored), in Redis and in this store's local cache. Denials
// cached by other stores (other application instances) run out on their own,
// at their RetryAfter.
func (f *Front) Reset(ctx context.Context, req core.TakeRequest, b Backend) error {
	keys, err := f.settings.Keys(req)
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	if f.cache != nil {
		f.cache.Forget(req)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", f.errRedis, err)
	}
	if err := b.Del(ctx, keys); err != nil {
		return fmt.Errorf("%w: %w", f.errRedis, err)
	}
	if f.cache != nil {
		f.cache.Forget(req) // a denial cached while the DEL was in flight
	}
	return nil
}
