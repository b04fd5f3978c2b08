package main

import (
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// The README's lines for rules kept in Redis, as every instance of an app
// runs them (compiled, not run: it needs a Redis). builtIn is the document
// the binary carries, in force until Redis answers.
func Example_readmeRedisRules() {
	var builtIn *rules.Document

	client := redis.NewClient(&redis.Options{Addr: "10.0.0.5:6379", ContextTimeoutEnabled: true})
	store, err := redisstore.New(client) // the counters, shared by every instance
	if err != nil {
		log.Fatal(err)
	}
	backend, err := redisstore.NewRulesBackend(client) // the rules, from the same Redis
	if err != nil {
		log.Fatal(err)
	}
	set, err := rules.New(store, builtIn)
	if err != nil {
		log.Fatal(err)
	}
	watcher, err := rules.WatchRedis(set, backend, rules.WithFallbackFile("rules.yaml")) // used while Redis is down at start
	if err != nil {
		log.Fatal(err)
	}
	defer watcher.Close()
}
