package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

var (
	_ luascript.Subscriber     = backend{}
	_ luascript.IntegerReplier = backend{}
)

// ReadsIntegerReplies reports true: Eval reads a one-integer reply (with an
// IntCmd), so the store sends requests of one limit the scripts that reply
// so.
func (backend) ReadsIntegerReplies() bool { return true }

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

// decisionCmd is a decision's script call: never sent twice, as a scriptCmd,
// and its reply, an array of integers, read as an IntSliceCmd reads it:
// straight into one []int64, where a Cmd would box every element.
type decisionCmd struct{ *redis.IntSliceCmd }

// NoRetry tells go-redis not to retry the command after a network error.
func (decisionCmd) NoRetry() bool { return true }

// String shows the call as Redis receives it (see callString).
func (c decisionCmd) String() string { return callString(c.Args(), c.Err(), c.Val()) }

// gapCmd is the call of a script that replies with one integer
// (luascript.Script.IntegerReply): never sent twice, as a decisionCmd, and
// its reply read as an IntCmd reads it, into an int64, with no slice.
type gapCmd struct{ *redis.IntCmd }

// NoRetry tells go-redis not to retry the command after a network error.
func (gapCmd) NoRetry() bool { return true }

// String shows the call as Redis receives it (see callString).
func (c gapCmd) String() string { return callString(c.Args(), c.Err(), c.Val()) }

// callString shows a script call as Redis receives it (its arguments go as
// *string, which go-redis's own formatting would print as addresses), then
// its error or its reply, for logs and hooks that print a command.
func callString(args []any, err error, val any) string {
	var b strings.Builder
	for i, arg := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if s, ok := arg.(*string); ok {
			b.WriteString(*s)
		} else {
			fmt.Fprint(&b, arg)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, ": %v", err)
	} else {
		fmt.Fprintf(&b, ": %v", val)
	}
	return b.String()
}

// scriptArgs returns the arguments of verb (EVALSHA or EVAL) of script with
// keys and args. Every argument but the number of keys goes as *string,
// which go-redis writes (and a cluster or ring client hashes) as the string,
// so the call allocates its argument slice and the command, and boxes
// nothing.
func scriptArgs(verb any, script *string, keys, args []string) []any {
	cmdArgs := make([]any, 3+len(keys)+len(args))
	cmdArgs[0], cmdArgs[1], cmdArgs[2] = verb, script, len(keys)
	for i := range keys {
		cmdArgs[3+i] = &keys[i]
	}
	for i := range args {
		cmdArgs[3+len(keys)+i] = &args[i]
	}
	return cmdArgs
}

// newDecisionCmd builds verb (EVALSHA or EVAL) of script with keys and args
// (scriptArgs). The first key's position is set, so a cluster client does
// not format the number of keys to find it.
func newDecisionCmd(ctx context.Context, verb any, script *string, keys, args []string) decisionCmd {
	cmd := redis.NewIntSliceCmd(ctx, scriptArgs(verb, script, keys, args)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return decisionCmd{cmd}
}

// newGapCmd is newDecisionCmd for a script that replies with one integer.
func newGapCmd(ctx context.Context, verb any, script *string, keys, args []string) gapCmd {
	cmd := redis.NewIntCmd(ctx, scriptArgs(verb, script, keys, args)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return gapCmd{cmd}
}

// Eval sends the script call (evalOnce) and, while the call fails with an
// error that proves it did not run, sends it again as the client would
// retry another command (retry.go).
func (b backend) Eval(ctx context.Context, sc *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	for attempt := 0; ; attempt++ {
		out, err := b.evalOnce(ctx, sc, keys, args, dst)
		if err == nil || !b.retry(ctx, err, attempt) {
			return out, err
		}
	}
}

// evalOnce sends EVALSHA sha numkeys keys... args... and, on NOSCRIPT (the
// script did not run), the same with EVAL and the source, and appends the
// reply's integers to dst: one for a script whose IntegerReply is set, else
// those of its array. A reply of another type is an error (a null element of
// an array, which no script sends, reads as 0, as go-redis reads it).
func (b backend) evalOnce(ctx context.Context, sc *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	if sc.IntegerReply {
		cmd := newGapCmd(ctx, "evalsha", &sc.SHA1, keys, args)
		err := b.client.Process(ctx, cmd)
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") { // guarded: the check allocates
			cmd = newGapCmd(ctx, "eval", &sc.Source, keys, args)
			err = b.client.Process(ctx, cmd)
		}
		if err != nil {
			return dst, err
		}
		return append(dst, cmd.Val()), nil
	}
	cmd := newDecisionCmd(ctx, "evalsha", &sc.SHA1, keys, args)
	err := b.client.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") { // guarded: the check allocates
		cmd = newDecisionCmd(ctx, "eval", &sc.Source, keys, args)
		err = b.client.Process(ctx, cmd)
	}
	if err != nil {
		return dst, err
	}
	return append(dst, cmd.Val()...), nil
}
