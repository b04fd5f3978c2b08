package rueidisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// Errors. Every error the package returns wraps one of these or a core
// sentinel (core.ErrInvalidLimit, core.ErrInvalidCost, core.ErrInvalidAlgorithm,
// core.ErrClock, core.ErrInvalidOption), so callers can test with errors.Is.
var (
	// ErrRedis reports that Redis could not decide: it is down, slow past the
	// context's deadline, or answered with an error. The request may or may not
	// have been counted; it is never sent again.
	ErrRedis = errors.New("rueidisstore: redis failed")
	// ErrClient reports a client the store cannot use: nil.
	ErrClient = errors.New("rueidisstore: unusable client")
)

// DefaultPrefix starts every key unless WithPrefix says otherwise.
const DefaultPrefix = luascript.DefaultPrefix

// DefaultLocalCacheSize is the number of denied requests the local cache holds
// unless WithLocalCache says otherwise.
const DefaultLocalCacheSize = luascript.DefaultLocalCacheSize

// Store is a core.Store that keeps every key's state in Redis and applies the
// algorithms there, as one Lua script per decision (EVALSHA, one round trip),
// so any number of application instances share exact limits. It is built on
// rueidis, whose client pipelines concurrent calls on shared connections, and
// accepts any rueidis.Client: a single node, Sentinel or Redis Cluster. It
// decides exactly as the go-redis store (store/redis) does, with the same
// scripts and keys, so the two can share a Redis. It is safe for concurrent
// use.
type Store struct {
	client  rueidis.Client
	front   *luascript.Front
	backend luascript.Backend // made once: boxing it per call would allocate
}

// Option configures a Store. The options are store/luascript's, shared with
// the go-redis binding.
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
// wrapping ErrClient for a nil client, and one wrapping core.ErrInvalidOption
// for an invalid option. The store never closes the client.
func New(client rueidis.Client, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	front, err := luascript.NewFront("rueidisstore", ErrRedis, opts...)
	if err != nil {
		return nil, err
	}
	return &Store{client: client, front: front, backend: backend{client}}, nil
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

// backend sends the store's calls through rueidis.
type backend struct{ client rueidis.Client }

// Del deletes keys.
func (b backend) Del(ctx context.Context, keys []string) error {
	return b.client.Do(ctx, b.client.B().Del().Key(keys...).Build()).Error()
}

// Eval encodes req and sends it once: EVALSHA, and EVAL when the server does
// not hold the script (NOSCRIPT: a restarted or flushed Redis, or a new cluster
// node). A NOSCRIPT reply means the script did not run, so sending EVAL is not
// a replay.
//
// The commands are built without rueidis's retryable flag, so rueidis never
// sends them twice after a network error (it retries only commands marked
// retryable, and follows MOVED and ASK, which mean the script did not run).
func (b backend) Eval(ctx context.Context, cfg *luascript.Config, req core.TakeRequest) ([]int64, error) {
	var buf [16]string // keys and arguments of up to four limits, on the stack
	sc, nk, strs, err := cfg.AppendStrings(buf[:0], req)
	if err != nil {
		return nil, err
	}
	keys, args := strs[:nk], strs[nk:]
	cmd := b.client.B()
	resp := b.client.Do(ctx, cmd.Evalsha().Sha1(sc.SHA1).Numkeys(int64(nk)).Key(keys...).Arg(args...).Build())
	if rerr, ok := rueidis.IsRedisErr(resp.Error()); ok && rerr.IsNoScript() {
		resp = b.client.Do(ctx, cmd.Eval().Script(sc.Source).Numkeys(int64(nk)).Key(keys...).Arg(args...).Build())
	}
	if err := resp.Error(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	vals, err := resp.AsIntSlice()
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %w", ErrRedis, luascript.ErrReply, err)
	}
	return vals, nil
}
