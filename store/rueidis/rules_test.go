package rueidisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/rueidis"
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

// rulesTargets start a single server and a cluster, and return a client of
// it and its nodes' addresses.
var rulesTargets = map[string]func(t *testing.T) (rueidis.Client, []string){
	"single": func(t *testing.T) (rueidis.Client, []string) {
		a := redistest.Start(t).Addr()
		return newClient(t, a), []string{a}
	},
	"cluster": func(t *testing.T) (rueidis.Client, []string) {
		addrs := redistest.StartCluster(t)
		return newClient(t, addrs...), addrs
	},
}

// Eval runs an unseen script through EVAL, then EVALSHA, returns its array
// of strings, and turns every other reply into an error.
func TestRulesBackendEval(t *testing.T) {
	for name, target := range rulesTargets {
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

func TestNewRulesBackendBadClient(t *testing.T) {
	_, err := NewRulesBackend(nil)
	assert.ErrorIs(t, err, ErrClient)
}

// Subscribe confirms the subscription and delivers what any node publishes.
// When the server kills the subscriber, rueidis subscribes again on its own
// and Subscribe says so (subscribed is called again), so the watcher reads
// what it may have missed; an ended context ends it.
func TestRulesBackendSubscribe(t *testing.T) {
	for name, target := range rulesTargets {
		t.Run(name, func(t *testing.T) {
			client, addrs := target(t)
			b, err := NewRulesBackend(client)
			require.NoError(t, err)
			ctx := context.Background()
			channel := testPrefix() + "{rules}:announce"
			sub := startSubscription(t, b, channel)
			sub.waitSubscribed(t)
			publish := func(a, payload string) {
				c := nodeClient(t, a)
				require.NoError(t, c.Do(ctx, c.B().Publish().Channel(channel).Message(payload).Build()).Error())
			}
			for _, a := range addrs { // through every node of a cluster
				publish(a, "v-"+a)
				assert.Equal(t, "v-"+a, sub.next(t))
			}
			var killed int64
			for _, a := range addrs {
				c := nodeClient(t, a) // another connection: CLIENT KILL skips its own
				n, err := c.Do(ctx, c.B().ClientKill().TypePubsub().Build()).AsInt64()
				require.NoError(t, err)
				killed += n
			}
			require.Positive(t, killed)
			sub.waitSubscribed(t) // renewed by rueidis
			publish(addrs[len(addrs)-1], "after")
			assert.Equal(t, "after", sub.next(t))

			sub.cancel()
			assert.ErrorIs(t, sub.ended(t), context.Canceled, "an ended context ends it")
		})
	}
}

// nodeClient returns a client of the one node at addr, even of a cluster,
// closed when t ends.
func nodeClient(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// subscription runs Subscribe on its own goroutine and records what it hears.
type subscription struct {
	subscribed chan struct{}
	messages   chan string
	done       chan struct{}
	cancel     context.CancelFunc
	err        error
}

func startSubscription(t *testing.T, b *RulesBackend, channel string) *subscription {
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
