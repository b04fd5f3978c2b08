package redisstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// Every instance runs FollowResets on a goroutine of its own for as long as
// its store serves: a reset or a refund on any instance (or by
// `ratewarden key reset`) then drops this instance's cached denials of the
// key at once, instead of at their Retry-After. It returns once its context
// ends.
func ExampleNew_followResets() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	store, err := redisstore.New(client, luascript.WithPrefix("myapp:rl:"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	go store.FollowResets(ctx) // drop cached denials of keys reset or refunded on any instance

	stop() // the app shuts down
	fmt.Println(store.FollowResets(ctx))
	// Output: context canceled
}
