package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/store/luascript"
)

// ErrClient reports a client the store cannot use safely: nil, or one that
// ignores context deadlines.
var ErrClient = errors.New("redisstore: unusable client")

// New returns a store (see package luascript) that keeps state in Redis
// through client, with opts applied. It returns an error wrapping ErrClient
// for a nil client or one that ignores context deadlines (a *redis.Client,
// *redis.ClusterClient or *redis.Ring created without ContextTimeoutEnabled:
// true, which would let a hung Redis hold a request for the client's
// ReadTimeout instead of its context's deadline), and an error wrapping
// core.ErrInvalidOption for an invalid option. The store never closes the
// client.
func New(client redis.UniversalClient, opts ...luascript.Option) (*luascript.Store, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	if !honoursContext(client) {
		return nil, fmt.Errorf("%w: the client ignores context deadlines; create it with ContextTimeoutEnabled: true in its options", ErrClient)
	}
	st, err := luascript.New(backend{client}, opts...)
	if err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	return st, nil
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

// backend sends a store's script calls through go-redis, and subscribes to
// the announcements of resets and refunds (luascript.Subscriber).
type backend struct{ client redis.UniversalClient }

var _ luascript.Subscriber = backend{}

// Subscribe subscribes to channel on a connection of its own, as
// RulesBackend.Subscribe does, for luascript.Store.FollowResets: it returns
// when ctx ends or the connection fails, and the store subscribes again.
func (b backend) Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error {
	return (&RulesBackend{b.client}).Subscribe(ctx, channel, subscribed, message)
}

// scriptCmd is a script call that go-redis must never send twice: go-redis
// retries a command after a network error (MaxRetries), which for a decision
// whose reply was lost would count the request twice. It still follows MOVED
// and ASK, which mean the script did not run.
type scriptCmd struct{ *redis.Cmd }

// NoRetry tells go-redis not to retry the command after a network error.
func (scriptCmd) NoRetry() bool { return true }

// Eval sends EVALSHA sha numkeys keys... args... and, on NOSCRIPT (the script
// did not run), the same with EVAL and the source. ARGV goes as *string, which
// go-redis writes as the string, so a decision boxes no argument but its keys
// (command hooks that print arguments show ARGV as pointers).
func (b backend) Eval(ctx context.Context, sc *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "evalsha", &sc.SHA1, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	for i := range args {
		cmdArgs = append(cmdArgs, &args[i])
	}
	cmd := scriptCmd{redis.NewCmd(ctx, cmdArgs...)}
	err := b.client.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") { // guarded: the check allocates
		eval := append([]any{"eval", sc.Source}, cmdArgs[2:]...)
		cmd = scriptCmd{redis.NewCmd(ctx, eval...)}
		err = b.client.Process(ctx, cmd)
	}
	if err != nil {
		return dst, err
	}
	vals, ok := cmd.Val().([]any)
	if !ok {
		return dst, fmt.Errorf("reply is %T, not an array", cmd.Val())
	}
	for i, v := range vals {
		n, ok := v.(int64)
		if !ok {
			return dst, fmt.Errorf("reply value %d is %T, not an integer", i, v)
		}
		dst = append(dst, n)
	}
	return dst, nil
}
