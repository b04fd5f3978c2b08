package rueidisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/ratewarden/ratewarden/store/luascript"
)

// ErrClient reports a client the store cannot use: nil.
var ErrClient = errors.New("rueidisstore: unusable client")

// New returns a store (see package luascript) that keeps state in Redis
// through client, with opts applied. It returns an error wrapping ErrClient
// for a nil client, and one wrapping core.ErrInvalidOption for an invalid
// option. The store never closes the client.
func New(client rueidis.Client, opts ...luascript.Option) (*luascript.Store, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	st, err := luascript.New(backend{client}, opts...)
	if err != nil {
		return nil, fmt.Errorf("rueidisstore: %w", err)
	}
	return st, nil
}

// backend sends a store's script calls through rueidis, and subscribes to
// the announcements of resets and refunds (luascript.Subscriber).
type backend struct{ client rueidis.Client }

var (
	_ luascript.Subscriber     = backend{}
	_ luascript.IntegerReplier = backend{}
)

// ReadsIntegerReplies reports true: Eval reads a one-integer reply, so the
// store sends requests of one limit the scripts that reply so.
func (backend) ReadsIntegerReplies() bool { return true }

// Subscribe subscribes to channel, as RulesBackend.Subscribe does, for
// luascript.Store.FollowResets: rueidis renews a broken subscription on its
// own and each renewal calls subscribed again (on which the store drops its
// whole cache, since announcements may have been missed).
func (b backend) Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error {
	return (&RulesBackend{b.client}).Subscribe(ctx, channel, subscribed, message)
}

// Eval sends the script call (evalOnce) and, while the call fails with an
// error that proves it did not run, sends it again (retry.go).
func (b backend) Eval(ctx context.Context, sc *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	for attempt := 0; ; attempt++ {
		out, err := b.evalOnce(ctx, sc, keys, args, dst)
		if err == nil || !retry(ctx, err, attempt) {
			return out, err
		}
	}
}

// evalOnce sends EVALSHA and, on NOSCRIPT (the script did not run), EVAL with
// the source. The commands are built without rueidis's retryable flag, so
// rueidis never sends them twice after a network error (it retries only
// commands marked retryable, and follows MOVED and ASK, which mean the
// script did not run). It appends the reply's integers to dst: one for a
// script whose IntegerReply is set, else those of its array.
func (b backend) evalOnce(ctx context.Context, sc *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	cmd := b.client.B()
	nk := int64(len(keys))
	resp := b.client.Do(ctx, cmd.Evalsha().Sha1(sc.SHA1).Numkeys(nk).Key(keys...).Arg(args...).Build())
	if rerr, ok := rueidis.IsRedisErr(resp.Error()); ok && rerr.IsNoScript() {
		resp = b.client.Do(ctx, cmd.Eval().Script(sc.Source).Numkeys(nk).Key(keys...).Arg(args...).Build())
	}
	if sc.IntegerReply {
		n, err := resp.AsInt64()
		if err != nil {
			return dst, err
		}
		return append(dst, n), nil
	}
	vals, err := resp.ToArray()
	if err != nil {
		return dst, err
	}
	for i := range vals {
		n, err := vals[i].AsInt64()
		if err != nil {
			return dst, fmt.Errorf("reply value %d: %w", i, err)
		}
		dst = append(dst, n)
	}
	return dst, nil
}
