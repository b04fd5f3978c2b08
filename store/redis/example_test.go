package redisstore_test

import (
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// New takes any go-redis client (single node, Sentinel failover, Cluster). It
// insists on ContextTimeoutEnabled, so a hung Redis costs a request its
// context's deadline rather than the client's ReadTimeout. Creating a client
// or a store does not connect; the first decision does.
func ExampleNew() {
	lax := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer lax.Close()
	_, err := redisstore.New(lax)
	fmt.Println(err)

	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	_, err = redisstore.New(client, luascript.WithPrefix("myapp{ratelimit}:"))
	fmt.Println(err)

	store, err := redisstore.New(client, luascript.WithPrefix("myapp:rl:"), luascript.WithLocalCache(4096))
	fmt.Println(store != nil, err)
	// Output:
	// redisstore: unusable client: the client ignores context deadlines; create it with ContextTimeoutEnabled: true in its options
	// redisstore: ratewarden: invalid option: key prefix "myapp{ratelimit}:" may not hold '{' or '}' (they would move the hash tag)
	// true <nil>
}

// The README's lines: a limiter whose state lives in Redis, shared by every
// instance of the app.
func ExampleNew_limiter() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	store, err := redisstore.New(client, luascript.WithPrefix("myapp:rl:")) // options are package luascript's
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(lim.Limits()[0])
	// Output: 10/s
}
