package redisstore_test

import (
	"fmt"
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// ParseURL reads the URLs ratewarden's tool and example servers take, and
// returns the options of a client that New accepts. The password never
// appears in an error.
func ExampleParseURL() {
	for _, s := range []string{
		"redis://localhost:6379/2",
		"rediss://app:s3cret@redis.example.com:6380/0?dial_timeout=2s&pool_size=20",
		"redis-cluster://10.0.0.1:7000,10.0.0.2:7000",
		"redis-sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster",
	} {
		opts, err := redisstore.ParseURL(s)
		if err != nil {
			log.Fatal(err)
		}
		client := redis.NewUniversalClient(opts) // connects on its first command
		fmt.Printf("%T %v db %d, user %q, TLS %t\n", client, opts.Addrs, opts.DB, opts.Username, opts.TLSConfig != nil)
		_ = client.Close()
	}
	_, err := redisstore.ParseURL("redis://app:s3cret@localhost:6379/x")
	fmt.Println(err)
	// Output:
	// *redis.Client [localhost:6379] db 2, user "", TLS false
	// *redis.Client [redis.example.com:6380] db 0, user "app", TLS true
	// *redis.ClusterClient [10.0.0.1:7000 10.0.0.2:7000] db 0, user "", TLS false
	// *redis.Client [10.0.0.1:26379 10.0.0.2:26379] db 0, user "", TLS false
	// redisstore: bad Redis URL "redis://app:xxxxx@localhost:6379/x": the database must be a number, 0 or more (want redis[s]://[user:pass@]host:port[/db], redis[s]-cluster://[user:pass@]host:port,... or redis[s]-sentinel://[user:pass@]host:port,.../master[/db], each with ?options)
}

// A managed Redis: the URL (with the user, no password) in an environment
// variable, the password in a mounted secret file, and the provider's CA.
func ExampleWithPasswordFile() {
	opts, err := redisstore.ParseURL(os.Getenv("REDIS_URL"), redisstore.WithPasswordFile("/run/secrets/redis-password"), redisstore.WithCAFile("/etc/ssl/redis-ca.pem"))
	if err != nil {
		log.Fatal(err) // says what is wrong, and never holds the password
	}
	store, err := redisstore.New(redis.NewUniversalClient(opts))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// RedactURL is the URL for a log line.
func ExampleRedactURL() {
	fmt.Println(redisstore.RedactURL("rediss://app:s3cret@redis.example.com:6380/0"))
	// Output:
	// rediss://app:xxxxx@redis.example.com:6380/0
}
