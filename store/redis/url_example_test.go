package redisstore_test

import (
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// ParseURL reads the URLs ratewarden's tool and example servers take, and
// returns the options of a client that New accepts.
func ExampleParseURL() {
	for _, s := range []string{"redis://localhost:6379/2", "redis-cluster://10.0.0.1:7000,10.0.0.2:7000"} {
		opts, err := redisstore.ParseURL(s)
		if err != nil {
			log.Fatal(err)
		}
		client := redis.NewUniversalClient(opts) // connects on its first command
		fmt.Printf("%T %v db %d\n", client, opts.Addrs, opts.DB)
		_ = client.Close()
	}
	_, err := redisstore.ParseURL("redis://localhost")
	fmt.Println(err)
	// Output:
	// *redis.Client [localhost:6379] db 2
	// *redis.ClusterClient [10.0.0.1:7000 10.0.0.2:7000] db 0
	// redisstore: bad Redis URL "redis://localhost": "localhost" is not host:port (want redis://host:port/db or redis-cluster://host:port,host:port)
}
