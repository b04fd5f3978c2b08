package rueidisstore

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"
)

// RulesBackend is the rueidis binding of the rules kept in Redis: a
// rules.RedisBackend, which rules.PushRules, rules.FetchRules and
// rules.WatchRedis take. It is safe for concurrent use, and never closes its
// client.
type RulesBackend struct{ client rueidis.Client }

// NewRulesBackend returns the rules' backend of client. It returns an error
// wrapping ErrClient for a nil client.
func NewRulesBackend(client rueidis.Client) (*RulesBackend, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrClient)
	}
	return &RulesBackend{client}, nil
}

// Eval sends EVALSHA and, on NOSCRIPT (the script did not run), EVAL with the
// source, each at most once (rueidis retries only commands marked
// retryable, which these are not), and returns the reply, an array of
// strings.
func (b *RulesBackend) Eval(ctx context.Context, sha1, source string, keys, args []string) ([]string, error) {
	cmd := b.client.B()
	nk := int64(len(keys))
	resp := b.client.Do(ctx, cmd.Evalsha().Sha1(sha1).Numkeys(nk).Key(keys...).Arg(args...).Build())
	if rerr, ok := rueidis.IsRedisErr(resp.Error()); ok && rerr.IsNoScript() {
		resp = b.client.Do(ctx, cmd.Eval().Script(source).Numkeys(nk).Key(keys...).Arg(args...).Build())
	}
	vals, err := resp.ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vals))
	for i := range vals {
		if out[i], err = vals[i].ToString(); err != nil {
			return nil, fmt.Errorf("reply value %d: %w", i, err)
		}
	}
	return out, nil
}

// Subscribe subscribes to channel and returns when ctx ends or rueidis gives
// the subscription up. rueidis renews a subscription whose connection broke
// on its own (unless the client was made with DisableRetry), and each
// renewal calls subscribed again, so the watcher reads what it may have
// missed meanwhile.
func (b *RulesBackend) Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error {
	hooked := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" && s.Channel == channel {
			subscribed()
		}
	})
	err := b.client.Receive(hooked, b.client.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) {
		message(m.Message)
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
