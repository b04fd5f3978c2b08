package rules

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// RedisBackend is what the rules kept in Redis need of a Redis client: run a
// script, and subscribe to a channel. Package rules imports no Redis client:
// store/redis (NewRulesBackend, for go-redis) and store/rueidis implement
// this interface, and another client's binding is two methods.
type RedisBackend interface {
	// Eval runs a Lua script with keys as KEYS and args as ARGV: EVALSHA
	// sha1 and, only after a NOSCRIPT reply (the script did not run), EVAL
	// source. It returns the script's reply, which must be an array of bulk
	// strings (every script of this package replies with one); any other
	// reply, an error reply included, is an error. It never sends the call
	// again once it may have reached the server, and it returns, with an
	// error, when ctx ends.
	Eval(ctx context.Context, sha1, source string, keys, args []string) ([]string, error)

	// Subscribe subscribes to channel and blocks while the subscription
	// lasts. It calls subscribed each time the server confirms the
	// subscription (again after a reconnection, for a client that
	// resubscribes on its own) and message with each message's payload, in
	// order; neither callback blocks, and both may run on the client's own
	// goroutine. It returns ctx.Err() once ctx ends, and otherwise when the
	// subscription is lost and not renewed, with an error saying why (nil
	// when the server ended it); the caller subscribes again.
	Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error
}

// Errors of the rules kept in Redis. Every error PushRules, FetchRules and a
// RedisWatcher return wraps one of them, ErrInvalidRules (with a *Problems)
// or core.ErrInvalidOption.
var (
	// ErrRedisFailed reports that Redis did not answer, or answered with an
	// error: down, slow past the deadline, a cluster without the rules' slot.
	ErrRedisFailed = errors.New("ratewarden: redis failed")
	// ErrNoRules reports that Redis holds no rules under the prefix: nobody
	// pushed any.
	ErrNoRules = errors.New("ratewarden: no rules in redis")
	// ErrRedisGarbage reports a rules key holding what no push writes: a
	// value of another type, a version that is not a positive integer, no
	// text, a text whose own version is not the stored one, or a digest
	// that is not the text's (a key edited by hand).
	ErrRedisGarbage = errors.New("ratewarden: unreadable rules in redis")
	// ErrStaleRules reports a push refused because its version is older
	// than the stored one, or is the stored one and Redis keeps no digest of
	// it (pushed by a ratewarden that stored none) to tell the same rules
	// from others. (The stored version with other rules is refused with
	// ErrVersionConflict.)
	ErrStaleRules = errors.New("ratewarden: rules version is not newer than the stored one")
	// ErrWatcherClosed reports a call on a closed RedisWatcher.
	ErrWatcherClosed = errors.New("ratewarden: rules watcher closed")
)

// RedisSource is the source a RedisWatcher gives Set.Load for a document read
// from Redis, which the reload hook hears (Reload.Source) and the problems of
// a refused document name.
const RedisSource = "redis"

// Defaults of the rules kept in Redis.
const (
	// DefaultRedisPrefix starts the rules' keys and channel unless
	// WithRedisPrefix says otherwise: the Redis store's default prefix.
	DefaultRedisPrefix = "rw:"
	// DefaultRedisPollInterval is how often a RedisWatcher reads the stored
	// version unless WithRedisPollInterval says otherwise.
	DefaultRedisPollInterval = 30 * time.Second
	// DefaultRedisTimeout bounds every Redis call of the rules unless
	// WithRedisTimeout says otherwise.
	DefaultRedisTimeout = 5 * time.Second
)

// Bounds of the options.
const (
	minPollInterval = 10 * time.Millisecond
	maxPollInterval = 24 * time.Hour
	maxRedisTimeout = time.Hour
)

// RedisOption configures PushRules, FetchRules and WatchRedis. PushRules and
// FetchRules use the prefix and the timeout; the other options are the
// watcher's, and they ignore them.
type RedisOption func(*redisConfig) error

// redisConfig is what the options set.
type redisConfig struct {
	prefix   string
	poll     time.Duration
	timeout  time.Duration
	fallback string
}

// WithRedisPrefix starts the rules' key and channel with prefix instead of
// DefaultRedisPrefix: give the prefix the Redis store has
// (luascript.WithPrefix), so that one prefix holds an application's limits
// and rules. As there, the prefix may be empty, may not be longer than 256
// bytes, and may not hold '{' or '}' (they would move the hash tag).
func WithRedisPrefix(prefix string) RedisOption {
	return func(c *redisConfig) error {
		if err := luascript.CheckPrefix(prefix); err != nil {
			return err
		}
		c.prefix = prefix
		return nil
	}
}

// WithRedisPollInterval sets how often a RedisWatcher reads the stored
// version, in case an announcement was lost (pub/sub delivers at most once):
// from 10 ms to 24 h; the default is DefaultRedisPollInterval. A read costs
// one small round trip; the document itself is read only when its version
// changed.
func WithRedisPollInterval(d time.Duration) RedisOption {
	return func(c *redisConfig) error {
		if d < minPollInterval || d > maxPollInterval {
			return fmt.Errorf("%w: poll interval %s out of [%s, %s]", core.ErrInvalidOption, d, minPollInterval, maxPollInterval)
		}
		c.poll = d
		return nil
	}
}

// WithRedisTimeout bounds every Redis call of the rules (a read of the
// version, a fetch, a push) to d, from more than 0 to 1 h; the default is
// DefaultRedisTimeout. A call that runs out fails with ErrRedisFailed.
func WithRedisTimeout(d time.Duration) RedisOption {
	return func(c *redisConfig) error {
		if d <= 0 || d > maxRedisTimeout {
			return fmt.Errorf("%w: redis timeout %s out of (0, %s]", core.ErrInvalidOption, d, maxRedisTimeout)
		}
		c.timeout = d
		return nil
	}
}

// WithFallbackFile names the rules file a RedisWatcher loads when it cannot
// load the rules from Redis at start (Redis down, no rules pushed yet, or
// rules it refuses): the last rules the deployment shipped, say. Without it,
// the Set keeps the document it was built with. Either way the watcher logs
// it and the reload hook hears it, and the rules in Redis take over once they
// can be loaded.
func WithFallbackFile(path string) RedisOption {
	return func(c *redisConfig) error {
		if path == "" || strings.ContainsRune(path, 0) {
			return fmt.Errorf("%w: fallback file %q is no file name", core.ErrInvalidOption, shorten(path))
		}
		c.fallback = path
		return nil
	}
}

// newRedisConfig applies opts over the defaults.
func newRedisConfig(opts []RedisOption) (redisConfig, error) {
	c := redisConfig{prefix: DefaultRedisPrefix, poll: DefaultRedisPollInterval, timeout: DefaultRedisTimeout}
	for _, o := range opts {
		if o == nil {
			return c, nilOption("redis option")
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// docKey is the hash holding the document's text and version, and channel
// the channel a push announces its version on. Both share the hash tag
// {rules}, so that a Redis Cluster keeps them in one slot (a channel has no
// slot, but a client that routes a subscription by its name's slot picks the
// node of the rules).
func (c *redisConfig) docKey() string  { return c.prefix + "{rules}:doc" }
func (c *redisConfig) channel() string { return c.prefix + "{rules}:announce" }

// PushRules validates raw (Parse) and stores it in Redis, in one script: it
// stores the text, its version and its digest (Document.Digest) only when the
// version is newer than the stored one, and then announces the version and
// digest to every RedisWatcher. Pushing the rules Redis holds again (the same
// version and digest) changes nothing and announces them again: it succeeds,
// so that a deployment may push on every run. It returns the version Redis
// holds after the call: raw's, or, for a refused push, the one Redis kept:
// newer (an error wrapping ErrStaleRules), or the same with another digest
// (ErrVersionConflict).
// It returns a *Problems (wrapping ErrInvalidRules) for a document that fails
// validation, which is not sent, an error wrapping ErrRedisGarbage when the
// rules key holds what no push wrote (delete it to start afresh), and one
// wrapping ErrRedisFailed when Redis fails.
func PushRules(ctx context.Context, b RedisBackend, raw []byte, opts ...RedisOption) (int64, error) {
	c, err := newRedisConfig(opts)
	if err != nil {
		return 0, err
	}
	if b == nil {
		return 0, nilOption("redis backend")
	}
	doc, err := Parse(raw, "push")
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id := Identity{Version: doc.Version, Digest: doc.Digest()}
	version := strconv.FormatInt(doc.Version, 10)
	reply, err := b.Eval(ctx, pushScript.sha1, pushScript.source,
		[]string{c.docKey()}, []string{version, string(raw), c.channel(), id.stamp()})
	if err != nil {
		return 0, fmt.Errorf("%w: push: %w", ErrRedisFailed, err)
	}
	return c.decodePush(reply, id)
}

// FetchRules returns the document Redis holds and its version. When the
// document cannot be used, it returns the text and version it could read
// with an error: wrapping ErrRedisGarbage (and the *Problems of a text that
// fails validation, that is not the stored version's, or whose digest is not
// the stored digest), ErrNoRules when nothing was pushed, or ErrRedisFailed
// when Redis fails. The digest of a document FetchRules returns without an
// error is that of Parse(raw).Digest().
func FetchRules(ctx context.Context, b RedisBackend, opts ...RedisOption) (raw []byte, version int64, err error) {
	c, err := newRedisConfig(opts)
	if err != nil {
		return nil, 0, err
	}
	if b == nil {
		return nil, 0, nilOption("redis backend")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	st, err := c.read(ctx, b, true)
	if err != nil {
		return st.text, st.version, err
	}
	_, err = c.parseStored(st)
	return st.text, st.version, err
}

// parseStored parses a stored document and checks that its own version is
// the stored one, and its digest the stored digest (a push stores them from
// one document; a hand-written key may differ, and a watcher would reload it
// forever, or run other rules than the version says).
func (c *redisConfig) parseStored(st stored) (*Document, error) {
	id, err := c.identity(st)
	if err != nil {
		return nil, err
	}
	doc, err := Parse(st.text, RedisSource)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRedisGarbage, c.docKey(), err)
	}
	if doc.Version != st.version {
		return nil, fmt.Errorf("%w: %s: the document's version is %d, the stored version %d",
			ErrRedisGarbage, c.docKey(), doc.Version, st.version)
	}
	if d := doc.Digest(); id.Digest != "" && d != id.Digest {
		return nil, fmt.Errorf("%w: %s: the stored digest %s is not the digest of the stored text, %s: the key was changed by other means than a push (push the rules under a new version)",
			ErrRedisGarbage, c.docKey(), ShortDigest(id.Digest), ShortDigest(d))
	}
	return doc, nil
}

// identity returns the identity Redis holds: the stored version and its
// digest, or no digest when the field is missing or names another version
// (a push by a ratewarden that stored no digest). A field no push writes
// is garbage.
func (c *redisConfig) identity(st stored) (Identity, error) {
	if st.stamp == "" {
		return Identity{Version: st.version}, nil
	}
	id, ok := parseStamp(st.stamp)
	if !ok {
		return Identity{}, fmt.Errorf("%w: %s: the digest %q is not the \"<version>:<sha-256>\" a push writes",
			ErrRedisGarbage, c.docKey(), shorten(st.stamp))
	}
	if id.Version != st.version {
		return Identity{Version: st.version}, nil
	}
	return id, nil
}

// shorten bounds a value quoted in a message.
func shorten(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
