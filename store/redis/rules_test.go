package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// rulesWait bounds every wait for the server: far longer than it takes.
const rulesWait = 10 * time.Second

// rulesScript returns a script the server has never seen, as the rules
// package passes one: its SHA1 and source.
func rulesScript(body string) (sha, src string) {
	src = fmt.Sprintf("-- rulestest %x\n%s", rand.Uint64(), body)
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:]), src
}

// rulesTargets are a single server and a cluster, each with a client and the
// address of a node the client's subscriptions do not go to (on a single
// server, the server).
func rulesTargets(t *testing.T) map[string]func(t *testing.T) (redis.UniversalClient, []string) {
	return map[string]func(t *testing.T) (redis.UniversalClient, []string){
		"single": func(t *testing.T) (redis.UniversalClient, []string) {
			a := redistest.Start(t).Addr()
			return newClient(t, a), []string{a}
		},
		"cluster": func(t *testing.T) (redis.UniversalClient, []string) {
			addrs := redistest.StartCluster(t)
			return newClusterClient(t, addrs), addrs
		},
	}
}

// Eval runs an unseen script through EVAL, then EVALSHA, returns its array
// of strings, and turns every other reply into an error.
func TestRulesBackendEval(t *testing.T) {
	for name, target := range rulesTargets(t) {
		t.Run(name, func(t *testing.T) {
			client, _ := target(t)
			b, err := NewRulesBackend(client)
			require.NoError(t, err)
			ctx := context.Background()
			sha, src := rulesScript("return {KEYS[1], ARGV[1], ARGV[2], tostring(#KEYS)}")
			for range 2 { // EVAL on NOSCRIPT, then EVALSHA
				got, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, []string{"a b", ""})
				require.NoError(t, err)
				assert.Equal(t, []string{"{rulestest}:k", "a b", "", "1"}, got)
			}
			sha, src = rulesScript("return {}")
			got, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, nil)
			require.NoError(t, err)
			assert.Empty(t, got)
			for what, body := range map[string]string{
				"an integer in the array": "return {'a', 1}",
				"a nil in the array":      "return {'a', false, 'b'}",
				"a string":                "return 'a'",
				"an integer":              "return 1",
				"an error reply":          "return redis.error_reply('rulestest: boom')",
				"a runtime error":         "return nil + 1",
			} {
				sha, src := rulesScript(body)
				_, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, nil)
				assert.Error(t, err, what)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = b.Eval(cctx, sha, src, []string{"{rulestest}:k"}, nil)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

// The binding insists, as New does, on a client that honours deadlines.
func TestNewRulesBackendBadClient(t *testing.T) {
	_, err := NewRulesBackend(nil)
	assert.ErrorIs(t, err, ErrClient)
	lax := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = lax.Close() })
	_, err = NewRulesBackend(lax)
	assert.ErrorIs(t, err, ErrClient)
	assert.Contains(t, err.Error(), "ContextTimeoutEnabled")
}

// A lost reply to a push is an error, and the script ran once: go-redis's
// retries, which would run it again, are off.
func TestRulesBackendLostReply(t *testing.T) {
	addr := redistest.Start(t).Addr()
	p := startDropProxy(t, addr)
	client := redis.NewClient(&redis.Options{Addr: p.ln.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: 5})
	t.Cleanup(func() { _ = client.Close() })
	b, err := NewRulesBackend(client)
	require.NoError(t, err)
	key := testPrefix() + "{rules}:n"
	sha, src := rulesScript("return {tostring(redis.call('INCR', KEYS[1]))}")
	got, err := b.Eval(bg, sha, src, []string{key}, nil) // loads the script
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got)
	p.drop.Store(true)
	_, err = b.Eval(bg, sha, src, []string{key}, nil)
	require.Error(t, err)
	n, err := newClient(t, addr).Get(bg, key).Int()
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the script ran once and was not replayed")
}

// Subscribe confirms the subscription, delivers what any node publishes, and
// returns when ctx ends or when the server kills the subscriber (the caller
// subscribes again).
func TestRulesBackendSubscribe(t *testing.T) {
	for name, target := range rulesTargets(t) {
		t.Run(name, func(t *testing.T) {
			client, addrs := target(t)
			b, err := NewRulesBackend(client)
			require.NoError(t, err)
			channel := testPrefix() + "{rules}:announce"
			sub := startSubscription(t, b, channel)
			sub.waitSubscribed(t)
			for _, a := range addrs { // through every node of a cluster
				require.NoError(t, newClient(t, a).Publish(bg, channel, "v-"+a).Err())
				assert.Equal(t, "v-"+a, sub.next(t))
			}
			var killed int64
			for _, a := range addrs {
				n, err := newClient(t, a).ClientKillByFilter(bg, "TYPE", "pubsub").Result()
				require.NoError(t, err)
				killed += n
			}
			require.Positive(t, killed)
			assert.Error(t, sub.ended(t), "a killed subscription ends with an error")
			assert.NotErrorIs(t, sub.err, context.Canceled)

			again := startSubscription(t, b, channel)
			again.waitSubscribed(t)
			again.cancel()
			assert.ErrorIs(t, again.ended(t), context.Canceled, "an ended context ends it")
		})
	}
}

// subscription runs Subscribe on its own goroutine and records what it hears.
type subscription struct {
	subscribed chan struct{}
	messages   chan string
	done       chan struct{}
	cancel     context.CancelFunc
	err        error
}

// subscriber is what the bindings' Subscribe is.
type subscriber interface {
	Subscribe(ctx context.Context, channel string, subscribed func(), message func(string)) error
}

func startSubscription(t *testing.T, b subscriber, channel string) *subscription {
	ctx, cancel := context.WithCancel(context.Background())
	s := &subscription{subscribed: make(chan struct{}, 10), messages: make(chan string, 10), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		s.err = b.Subscribe(ctx, channel, func() { s.subscribed <- struct{}{} }, func(p string) { s.messages <- p })
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	return s
}

func (s *subscription) waitSubscribed(t *testing.T) {
	t.Helper()
	select {
	case <-s.subscribed:
	case <-s.done:
		t.Fatalf("subscription ended: %v", s.err)
	case <-time.After(rulesWait):
		t.Fatal("no subscription confirmed")
	}
}

func (s *subscription) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-s.messages:
		return m
	case <-time.After(rulesWait):
		t.Fatal("no message")
		return ""
	}
}

func (s *subscription) ended(t *testing.T) error {
	t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(rulesWait):
		t.Fatal("the subscription did not end")
		return nil
	}
}
