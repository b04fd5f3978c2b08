package luascript_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// printer is a Backend that prints the call a Store hands it instead of
// sending it, and replies as Redis does to GCRA's script for a key it has
// never seen: admitted (1), at 1,700,000,000,000,000 µs, on a fresh state (0).
// A real binding sends EVALSHA script.SHA1, then EVAL script.Source on
// NOSCRIPT (see store/redis and store/rueidis).
type printer struct{}

func (printer) Eval(_ context.Context, script *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	fmt.Println("KEYS:", keys)
	fmt.Println("ARGV:", args)
	return append(dst, 1, 1_700_000_000_000_000, 0), nil
}

// A Store encodes a request as one script call, hands it to its Backend, and
// rebuilds the decision from the reply: for GCRA, the verdict, the server's
// time and the state the script found.
func Example() {
	store, err := luascript.New(printer{}, luascript.WithPrefix("myapp:"))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := store.Take(context.Background(), core.TakeRequest{
		Namespace: "api", Key: "203.0.113.7", Algorithm: core.GCRA,
		Limits: []core.Limit{core.PerSecond(10)}, Cost: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Allowed, d.Remaining, d.ResetAfter, d.Limit)
	// Output:
	// KEYS: [myapp:{api:203.0.113.7}:g]
	// ARGV: [1 100000 1000000]
	// true 9 100ms 10/s
}

// New refuses a missing backend and invalid options with errors that say why.
func ExampleNew() {
	_, err := luascript.New(nil)
	fmt.Println(err)
	_, err = luascript.New(printer{}, luascript.WithMinTTL(-time.Second))
	fmt.Println(err)
	_, err = luascript.New(printer{}, luascript.WithPrefix("bad{"))
	fmt.Println(err)
	// Output:
	// ratewarden: invalid option: nil backend
	// ratewarden: invalid option: negative minimum TTL -1s
	// ratewarden: invalid option: key prefix "bad{" may not hold '{' or '}' (they would move the hash tag)
}

// Keys carry a hash tag, so all limits of one request share a cluster slot;
// braces in the client's key are escaped so they cannot move the tag, and very
// long keys are hashed.
func ExampleStore_Keys() {
	store, err := luascript.New(printer{}, luascript.WithPrefix("rl:"))
	if err != nil {
		fmt.Println(err)
		return
	}
	keys, err := store.Keys(core.TakeRequest{
		Key: "user{42}", Algorithm: core.SlidingWindow,
		Limits: []core.Limit{core.PerSecond(5), core.PerHour(1000)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range keys {
		fmt.Println(k)
	}
	// Output:
	// rl:{:user%7B42%7D}:w:2:0
	// rl:{:user%7B42%7D}:w:2:1
}

// intPrinter is a Backend like printer that also reads one-integer replies
// (an IntegerReplier, as the go-redis and rueidis bindings are), and replies
// to such a script as Redis does for a key it has never seen: admitted, with
// no time owed (0).
type intPrinter struct{}

func (intPrinter) ReadsIntegerReplies() bool { return true }

func (intPrinter) Eval(_ context.Context, script *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	fmt.Println("script:", strings.Fields(script.String())[0], "integer reply:", script.IntegerReply)
	fmt.Println("KEYS:", keys)
	fmt.Println("ARGV:", args)
	return append(dst, 0), nil
}

// Through a Backend that reads one-integer replies, a request of one limit
// runs the algorithm's "+one" script, which replies with one integer, and a
// spend of 1 sends only the limit's figures: less for Redis to do per call.
func ExampleIntegerReplier() {
	store, err := luascript.New(intPrinter{}, luascript.WithPrefix("myapp:"))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := store.Take(context.Background(), core.TakeRequest{
		Namespace: "api", Key: "203.0.113.7", Algorithm: core.GCRA,
		Limits: []core.Limit{core.PerSecond(10)}, Cost: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Allowed, d.Remaining, d.ResetAfter, d.Limit)
	// Output:
	// script: gcra+one integer reply: true
	// KEYS: [myapp:{api:203.0.113.7}:g]
	// ARGV: [100000 1000000]
	// true 9 100ms 10/s
}
