package luascript_test

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// A binding encodes a request, sends EVALSHA with the script's SHA1, KEYS and
// ARGV, and decodes the reply: for GCRA, the verdict, the server's time and
// the state the script found, from which core rebuilds the whole decision.
func Example() {
	cfg := luascript.Config{Prefix: "ratewarden:"}
	req := core.TakeRequest{
		Namespace: "api", Key: "203.0.113.7", Algorithm: core.GCRA,
		Limits: []core.Limit{core.PerSecond(10)}, Cost: 1,
	}
	call, err := cfg.Encode(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("script:", call.Script.Algorithm)
	fmt.Println("KEYS:", call.Keys)
	fmt.Println("ARGV:", call.Args)

	// The reply a server sends for the first request on the key: admitted, at
	// 1,700,000,000,000,000 µs, on a fresh state.
	d, err := luascript.Decode(req, []int64{1, 1_700_000_000_000_000, 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Allowed, d.Remaining, d.ResetAfter, d.Limit)
	// Output:
	// script: gcra
	// KEYS: [ratewarden:{api:203.0.113.7}:gcra:10/1000000/10]
	// ARGV: [-1 1 0 100000 1000000]
	// true 9 100ms 10/s
}

// Keys carry a hash tag, so all limits of one request share a cluster slot;
// braces in the client's key are escaped so they cannot move the tag, and very
// long keys are hashed.
func ExampleConfig_Keys() {
	cfg := luascript.Config{Prefix: "rl:"}
	keys, err := cfg.Keys(core.TakeRequest{
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
	_, err = luascript.Config{Prefix: "bad{"}.Keys(core.TakeRequest{
		Algorithm: core.GCRA, Limits: []core.Limit{core.Every(1, time.Second)},
	})
	fmt.Println(err)
	// Output:
	// rl:{:user%7B42%7D}:sliding-window:5/1000000/5+1000/3600000000/1000:0
	// rl:{:user%7B42%7D}:sliding-window:5/1000000/5+1000/3600000000/1000:1
	// ratewarden: invalid option: key prefix "bad{" may not hold '{' or '}' (they would move the hash tag)
}
