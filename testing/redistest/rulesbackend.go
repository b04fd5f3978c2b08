package redistest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// The checks below are shared by the Redis bindings' backends of the rules
// kept in Redis (NewRulesBackend in store/redis and store/rueidis), as those
// of bindings.go are by their luascript.Backend.

// RulesBackend is what the checks need of a binding's backend of the rules
// kept in Redis: the two methods of rules.RedisBackend, declared again here
// because this module does not import the rules module. Every
// rules.RedisBackend satisfies it.
type RulesBackend interface {
	// Eval runs a Lua script, EVALSHA sha1 and, after NOSCRIPT, EVAL source,
	// and returns its reply, an array of bulk strings.
	Eval(ctx context.Context, sha1, source string, keys, args []string) ([]string, error)
	// Subscribe subscribes to channel and blocks while the subscription
	// lasts, calling subscribed on each confirmation and message with each
	// message's payload.
	Subscribe(ctx context.Context, channel string, subscribed func(), message func(payload string)) error
}

// LostSubscription is what a binding's Subscribe does when the server kills
// its connection: both are what rules.RedisBackend allows.
type LostSubscription int

const (
	// SubscriptionEnds says Subscribe returns an error (not the context's),
	// and the caller subscribes again (go-redis).
	SubscriptionEnds LostSubscription = iota
	// SubscriptionRenewed says the client subscribes again on its own and
	// Subscribe calls subscribed again (rueidis).
	SubscriptionRenewed
)

// rulesWait bounds every wait for the server: far longer than it takes.
const rulesWait = 10 * time.Second

// NewRulesBackend returns the binding's backend of the rules (its
// NewRulesBackend) on a client of the server whose nodes are at addrs: a
// single server's address or, when cluster is set, every node of a Redis
// Cluster.
type NewRulesBackend func(t *testing.T, addrs []string, cluster bool) RulesBackend

// RulesBackendChecks checks a binding's backend of the rules on a single
// server and on a three-master cluster, each started for the test, with
// the backend newBackend returns: its Eval (see rulesEval) and its Subscribe
// (see rulesSubscribe), which does what lost says when the server kills its
// connection.
func RulesBackendChecks(t *testing.T, newBackend NewRulesBackend, lost LostSubscription) {
	targets := []struct {
		name    string
		cluster bool
		start   func(t *testing.T) []string
	}{
		{"single", false, func(t *testing.T) []string { return []string{Start(t).Addr()} }},
		{"cluster", true, func(t *testing.T) []string { return StartCluster(t) }},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			addrs := target.start(t)
			b := newBackend(t, addrs, target.cluster)
			t.Run("Eval", func(t *testing.T) { rulesEval(t, b) })
			t.Run("Subscribe", func(t *testing.T) { rulesSubscribe(t, b, addrs, lost) })
		})
	}
}

// rulesEval checks a binding's Eval: a script the server has never
// seen runs through EVAL, then EVALSHA, with KEYS and ARGV in order, and its
// array of strings is returned (an empty one too); every other reply (an
// array holding an integer or a nil, a string, an integer, an error reply, a
// runtime error) is an error, and so is an ended context.
func rulesEval(t *testing.T, b RulesBackend) {
	ctx := context.Background()
	sha, src := UnseenScript("return {KEYS[1], ARGV[1], ARGV[2], tostring(#KEYS)}")
	for range 2 { // EVAL on NOSCRIPT, then EVALSHA
		got, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, []string{"a b", ""})
		must.NoError(t, err)
		expect.Equal(t, []string{"{rulestest}:k", "a b", "", "1"}, got)
	}
	sha, src = UnseenScript("return {}")
	got, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, nil)
	must.NoError(t, err)
	expect.Empty(t, got)
	for what, body := range map[string]string{
		"an integer in the array": "return {'a', 1}",
		"a nil in the array":      "return {'a', false, 'b'}",
		"a string":                "return 'a'",
		"an integer":              "return 1",
		"an error reply":          "return redis.error_reply('rulestest: boom')",
		"a runtime error":         "return nil + 1",
	} {
		sha, src := UnseenScript(body)
		_, err := b.Eval(ctx, sha, src, []string{"{rulestest}:k"}, nil)
		expect.Error(t, err, what)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.Eval(cctx, sha, src, []string{"{rulestest}:k"}, nil)
	expect.ErrorIs(t, err, context.Canceled)
}

// rulesSubscribe checks a binding's Subscribe on the server whose
// nodes are at addrs (a single server's address, or every node of a
// cluster): the subscription is confirmed and hears what every node
// publishes. Then the server kills the subscriber (CLIENT KILL TYPE pubsub on
// every node), and Subscribe does what lost says: it ends with an error that
// is not the context's, and a new subscription is confirmed; or it is
// renewed, confirmed again, and hears what is published next. An ended
// context ends a subscription with context.Canceled.
func rulesSubscribe(t *testing.T, b RulesBackend, addrs []string, lost LostSubscription) {
	channel := fmt.Sprintf("redistest%x:{rules}:announce", rand.Uint64())
	publish := func(addr, payload string) {
		_, err := command(addr, "PUBLISH", channel, payload)
		must.NoError(t, err)
	}
	sub := startSubscription(t, b, channel)
	sub.waitSubscribed(t)
	for _, a := range addrs { // through every node of a cluster
		publish(a, "v-"+a)
		expect.Equal(t, "v-"+a, sub.next(t))
	}
	var killed int64
	for _, a := range addrs { // a connection of its own: CLIENT KILL skips the caller's
		reply, err := command(a, "CLIENT", "KILL", "TYPE", "pubsub")
		must.NoError(t, err)
		n, err := strconv.ParseInt(reply, 10, 64)
		must.NoError(t, err)
		killed += n
	}
	must.Positive(t, killed)
	if lost == SubscriptionRenewed {
		sub.waitSubscribed(t) // renewed by the client
		publish(addrs[len(addrs)-1], "after")
		expect.Equal(t, "after", sub.next(t))
	} else {
		expect.Error(t, sub.ended(t), "a killed subscription ends with an error")
		expect.NotErrorIs(t, sub.err, context.Canceled)
		sub = startSubscription(t, b, channel)
		sub.waitSubscribed(t)
	}
	sub.cancel()
	expect.ErrorIs(t, sub.ended(t), context.Canceled, "an ended context ends it")
}

// UnseenScript returns a Lua script no server has seen yet, body behind a
// comment holding a random number: its SHA1 and its source, so that its first
// EVALSHA gets NOSCRIPT.
func UnseenScript(body string) (sha1Hex, source string) {
	source = fmt.Sprintf("-- redistest %x\n%s", rand.Uint64(), body)
	sum := sha1.Sum([]byte(source))
	return hex.EncodeToString(sum[:]), source
}

// subscription runs Subscribe on its own goroutine and records what it hears.
type subscription struct {
	subscribed chan struct{}
	messages   chan string
	done       chan struct{}
	cancel     context.CancelFunc
	err        error
}

// startSubscription subscribes b to channel until the test ends.
func startSubscription(t *testing.T, b RulesBackend, channel string) *subscription {
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

// waitSubscribed waits for the next confirmation of the subscription.
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

// next waits for the next message and returns its payload.
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

// ended waits for Subscribe to return and returns its error.
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
