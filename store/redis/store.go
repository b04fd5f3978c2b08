package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/redis/go-redis/v9"
)

// Errors. Every error the package returns wraps one of these or a core
// sentinel (core.ErrInvalidLimit, core.ErrInvalidCost, core.ErrInvalidAlgorithm,
// core.ErrClock, core.ErrInvalidOption), so callers can test with errors.Is.
var (
	// ErrRedis reports that Redis could not decide: it is down, slow past the
	// context's deadline, or answered with an error. The request may or may not
	// have been counted; it is never sent again.
	ErrRedis = errors.New("redisstore: redis failed")
	// ErrClient reports a client the store cannot use safely: nil, or one that
	// ignores context deadlines.
	ErrClient = errors.New("redisstore: unusable client")
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = "ratewarden:"

// DefaultLocalCacheSize is the number of denied keys the local cache holds
// unless WithLocalCache says otherwise.
const DefaultLocalCacheSize = 16384

// Store is a core.Store that keeps every key's state in Redis and applies the
// algorithms there, as one Lua script per decision (EVALSHA, one round trip),
// so any number of application instances share exact limits. It accepts any
// redis.UniversalClient: a single node, Sentinel failover or Cluster. It is
// safe for concurrent use.
type Store struct {
	client    redis.UniversalClient
	cfg       luascript.Config
	cacheSize int
	cache     *luascript.DenyCache
	now       func() time.Time
}

// Option configures a Store.
type Option func(*Store) error

// WithPrefix starts every key with prefix instead of DefaultPrefix. The prefix
// may not hold '{' or '}' (they would move the hash tag).
func WithPrefix(prefix string) Option {
	return func(s *Store) error {
		s.cfg.Prefix = prefix
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
	return func(s *Store) error {
		s.cfg.CallerClock = true
		return nil
	}
}

// WithMinTTL sets a floor on the time to live of every key (default 0: a key
// expires exactly when its state equals a fresh one). In caller-clock mode,
// a caller clock that runs slower than Redis's (a manual clock in tests) would
// otherwise let Redis expire state the caller still needs.
func WithMinTTL(d time.Duration) Option {
	return func(s *Store) error {
		s.cfg.MinTTL = d
		return nil
	}
}

// WithLocalCache sets how many denied requests the store remembers locally
// (default DefaultLocalCacheSize; 0 turns the cache off). While a remembered
// denial's RetryAfter runs, the same request (same namespace, key, algorithm,
// limits and cost) is denied again without a round trip to Redis. See the
// package doc for why this never admits more than Redis would.
func WithLocalCache(size int) Option {
	return func(s *Store) error {
		if size < 0 || size > 1<<24 {
			return fmt.Errorf("%w: local cache size %d out of [0, %d]", core.ErrInvalidOption, size, 1<<24)
		}
		s.cacheSize = size
		return nil
	}
}

// New returns a Store that keeps state through client. It returns an error
// wrapping ErrClient for a nil client or one that ignores context deadlines
// (a *redis.Client, *redis.ClusterClient or *redis.Ring created without
// ContextTimeoutEnabled: true, which would let a hung Redis hold a request for
// the client's ReadTimeout instead of its context's deadline), and an error
// wrapping core.ErrInvalidOption for an invalid option.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	if !honoursContext(client) {
		return nil, fmt.Errorf("%w: the client ignores context deadlines; create it with ContextTimeoutEnabled: true in its options", ErrClient)
	}
	s := &Store{client: client, cfg: luascript.Config{Prefix: DefaultPrefix}, cacheSize: DefaultLocalCacheSize, now: time.Now}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("redisstore: %w: nil option", core.ErrInvalidOption)
		}
		if err := o(s); err != nil {
			return nil, fmt.Errorf("redisstore: %w", err)
		}
	}
	if err := s.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	if s.cacheSize > 0 {
		s.cache = luascript.NewDenyCache(s.cacheSize)
	}
	return s, nil
}

// honoursContext reports whether a client of a known type bounds its socket
// I/O by the context's deadline; clients of other types are trusted.
func honoursContext(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

// Take decides req in one round trip to Redis and, when it is admitted, spends
// its cost under every limit. Invalid requests return the error core would
// (wrapping core's sentinels) without calling Redis; a failed or timed-out call
// returns an error wrapping ErrRedis.
func (s *Store) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	var at time.Time
	if s.cache != nil && req.Cost > 0 {
		at = s.localNow(req)
		if d, ok := s.cache.Get(req, at); ok {
			return d, nil
		}
	}
	args := make([]any, 2, 6+6*len(req.Limits))
	args[0] = "evalsha"
	sc, args, err := s.cfg.AppendCall(args, req)
	if err != nil {
		return core.Decision{}, fmt.Errorf("redisstore: %w", err)
	}
	args[1] = boxedSHA[sc.Algorithm]
	vals, err := s.run(ctx, sc, args)
	if err != nil {
		return core.Decision{}, err
	}
	d, err := luascript.Decode(req, vals)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	if s.cache != nil && req.Cost > 0 && !d.Allowed {
		s.cache.Put(req, at, d)
	}
	return d, nil
}

// localNow is the instant a cached denial is measured from: the caller's time
// in caller-clock mode, else the local clock read before the call is sent (so
// a cached denial ends no later than Redis's).
func (s *Store) localNow(req core.TakeRequest) time.Time {
	if s.cfg.CallerClock {
		return req.Now
	}
	return s.now()
}

// Reset forgets req's key under req's algorithm and limits (req.Cost and
// req.Now are ignored), in Redis and in this store's local cache. Denials
// cached by other Store values (other application instances) run out on their
// own, at their RetryAfter.
func (s *Store) Reset(ctx context.Context, req core.TakeRequest) error {
	keys, err := s.cfg.Keys(req)
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	if s.cache != nil {
		s.cache.Forget(req)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	if err := s.client.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	if s.cache != nil {
		s.cache.Forget(req) // a denial cached while the DEL was in flight
	}
	return nil
}

// scriptCmd is a script call that go-redis must never send twice: once it may
// have reached the server, a lost reply is an error, not a retry, because the
// script may have run and spent the request's cost.
type scriptCmd struct{ *redis.Cmd }

// NoRetry tells go-redis not to retry the command after a network error.
func (scriptCmd) NoRetry() bool { return true }

// boxedSHA holds each script's SHA1 as an interface value, so a decision does
// not box it again.
var boxedSHA = func() (b [core.GCRA + 1]any) {
	for _, sc := range luascript.Scripts() {
		b[sc.Algorithm] = sc.SHA1
	}
	return b
}()

// run sends args (EVALSHA sha numkeys keys... argv...) and, when the server
// does not hold the script (NOSCRIPT: a restarted or flushed Redis, or a new
// cluster node), the same with EVAL and the source. A NOSCRIPT reply means the
// script did not run, so sending EVAL is not a replay.
func (s *Store) run(ctx context.Context, sc *luascript.Script, args []any) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	cmd := scriptCmd{redis.NewCmd(ctx, args...)}
	err := s.client.Process(ctx, cmd)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		eval := append([]any{"eval", sc.Source}, args[2:]...)
		cmd = scriptCmd{redis.NewCmd(ctx, eval...)}
		err = s.client.Process(ctx, cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	vals, err := cmd.Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %w", ErrRedis, luascript.ErrReply, err)
	}
	return vals, nil
}
