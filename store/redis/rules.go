package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RulesBackend is the go-redis binding of the rules kept in Redis: a
// rules.RedisBackend, which rules.PushRules, rules.FetchRules and
// rules.WatchRedis take. It is safe for concurrent use, and never closes its
// client.
type RulesBackend struct{ client redis.UniversalClient }

// NewRulesBackend returns the rules' backend of client, which, as for New,
// must honour context deadlines (ContextTimeoutEnabled). It returns an error
// wrapping ErrClient otherwise.
func NewRulesBackend(client redis.UniversalClient) (*RulesBackend, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	if !honoursContext(client) {
		return nil, fmt.Errorf("%w: the client ignores context deadlines; create it with ContextTimeoutEnabled: true in its options", ErrClient)
	}
	return &RulesBackend{client}, nil
}

// Eval sends EVALSHA and, on NOSCRIPT (the script did not run), EVAL with the
// source, each at most once (go-redis's retries are off for them: a push run
// twice would be refused by its own first run), and returns the reply, an
// array of strings.
func (b *RulesBackend) Eval(ctx context.Context, sha1, source string, keys, args []string) ([]string, error) {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "evalsha", sha1, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	for _, a := range args {
		cmdArgs = append(cmdArgs, a)
	}
	cmd := scriptCmd{redis.NewCmd(ctx, cmdArgs...)}
	err := b.client.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmdArgs[0], cmdArgs[1] = "eval", source
		cmd = scriptCmd{redis.NewCmd(ctx, cmdArgs...)}
		err = b.client.Process(ctx, cmd)
	}
	if err != nil {
		return nil, err
	}
	return cmd.StringSlice()
}

// Subscribe subscribes to channel on a connection of its own (on a cluster,
// one to the node that serves the channel's hash slot, though any node
// hears every publication) and returns when ctx ends or the connection
// fails; it never resubscribes itself.
func (b *RulesBackend) Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error {
	ps := b.client.Subscribe(ctx)
	defer ps.Close()
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() }) // a cancel does not end a read
	defer stop()
	if err := ps.Subscribe(ctx, channel); err != nil {
		return orCtx(ctx, err)
	}
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			return orCtx(ctx, err)
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				subscribed()
			}
		case *redis.Message:
			message(m.Payload)
		}
	}
}

// orCtx returns ctx's error once it ended, err otherwise.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
