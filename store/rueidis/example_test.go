package rueidisstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	rueidisstore "github.com/ratewarden/ratewarden/store/rueidis"
)

// New refuses what it cannot use, with errors that say why.
func ExampleNew() {
	_, err := rueidisstore.New(nil)
	fmt.Println(err, errors.Is(err, rueidisstore.ErrClient))
	// Output:
	// rueidisstore: unusable client: nil client true
}

// The one-line use: a limiter of 10 requests per second per client, shared by
// every instance of the application through Redis. (This example needs a
// Redis on localhost:6379, so it is compiled but not run by go test.)
func Example() {
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	store, err := rueidisstore.New(client, luascript.WithPrefix("myapp:rl:"))
	if err != nil {
		fmt.Println(err)
		return
	}
	limiter, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	d, err := limiter.Allow(ctx, "203.0.113.7")
	if err != nil {
		fmt.Println("redis failed; the HTTP layer fails open or closed:", err)
		return
	}
	fmt.Println(d.Allowed, d.Remaining)
}
