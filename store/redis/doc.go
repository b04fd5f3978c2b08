// Package redisstore binds ratewarden's Redis store (package store/luascript,
// whose doc says what the store does: one atomic round trip per decision, its
// time, keys, failures and local cache of denials) to go-redis v9. New takes
// any redis.UniversalClient (a single node, Sentinel failover or Redis
// Cluster) created with ContextTimeoutEnabled, and returns a *luascript.Store.
// The package is named redisstore so that it reads well beside go-redis's own
// package, redis:
//
//	store, err := redisstore.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true}))
package redisstore
