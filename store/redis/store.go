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
const DefaultPrefix = luascript.DefaultPrefix

// DefaultLocalCacheSize is the number of denied requests the local cache holds
// unless WithLocalCache says otherwise.
const DefaultLocalCacheSize = luascript.DefaultLocalCacheSize

// Store is a core.Store that keeps every key's state in Redis and applies the
// algorithms there, as one Lua script per decision (EVALSHA, one round trip),
// so any number of application instances share exact limits. It accepts any
// redis.UniversalClient: a single node, Sentinel failover or Cluster. It is
// safe for concurrent use.
type Store struct {
	client  redis.UniversalClient
	front   *luascript.Front
	backend luascript.Backend // made once: boxing it per call would allocate
}

// Option configures a Store. The options are store/luascript's, shared with
// the rueidis binding.
type Option = luascript.Option

// WithPrefix starts every key with prefix instead of DefaultPrefix; see
// luascript.WithPrefix.
func WithPrefix(prefix string) Option { return luascript.WithPrefix(prefix) }

// WithCallerClock decides at TakeRequest.Now instead of Redis's TIME; see
// luascript.WithCallerClock for what clock skew then does.
func WithCallerClock() Option { return luascript.WithCallerClock() }

// WithMinTTL sets a floor on every key's time to live; see luascript.WithMinTTL.
func WithMinTTL(d time.Duration) Option { return luascript.WithMinTTL(d) }

// WithLocalCache sets how many denied requests the store remembers locally (0
// turns the cache off); see luascript.WithLocalCache and luascript.DenyCache.
func WithLocalCache(size int) Option { return luascript.WithLocalCache(size) }

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
	front, err := luascript.NewFront("redisstore", ErrRedis, opts...)
	if err != nil {
		return nil, err
	}
	return &Store{client: client, front: front, backend: backend{client}}, nil
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
// returns an error wrapping ErrRedis. A request whose denial is in the local
// cache is denied again without a call.
func (s *Store) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	return s.front.Take(ctx, req, s.backend)
}

// Reset forgets req's key under req's algorithm and limits (req.Cost and
// req.Now are ignored), in Redis and in this store's local cache. Denials
// cached by other Store values (other application instances) run out on their
// own, at their RetryAfter.
func (s *Store) Reset(ctx context.Context, req core.TakeRequest) error {
	return s.front.Reset(ctx, req, s.backend)
}

// backend sends the store's calls through go-redis.
type backend struct{ client redis.UniversalClient }

// Del deletes keys.
func (b backend) Del(ctx context.Context, keys []string) error {
	return b.client.Del(ctx, keys...).Err()
}

// Eval encodes req straight into the command's arguments and sends it; see
// run.
func (b backend) Eval(ctx context.Context, cfg *luascript.Config, req core.TakeRequest) ([]int64, error) {
	args := make([]any, 2, 6+6*len(req.Limits))
	args[0] = "evalsha"
	sc, args, err := cfg.AppendCall(args, req)
	if err != nil {
		return nil, err
	}
	args[1] = boxedSHA[sc.Algorithm]
	return b.run(ctx, sc, args)
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
func (b backend) run(ctx context.Context, sc *luascript.Script, args []any) ([]int64, error) {
	cmd := scriptCmd{redis.NewCmd(ctx, args...)}
	err := b.client.Process(ctx, cmd)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		eval := append([]any{"eval", sc.Source}, args[2:]...)
		cmd = scriptCmd{redis.NewCmd(ctx, eval...)}
		err = b.client.Process(ctx, cmd)
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
