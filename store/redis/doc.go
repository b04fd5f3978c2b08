// Package redisstore binds ratewarden's Redis store (package store/luascript,
// whose doc says what the store does: one atomic round trip per decision, its
// time, keys, failures and local cache of denials) to go-redis v9. New takes
// any redis.UniversalClient (a single node, Sentinel failover or Redis
// Cluster) created with ContextTimeoutEnabled, and returns a *luascript.Store.
// The package is named redisstore so that it reads well beside go-redis's own
// package, redis:
//
//	store, err := redisstore.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true}))
//
// A fresh go-redis client does its start-up work on its first commands: a
// cluster client loads the slot map and the command table, and every client
// dials. A burst of requests on a cold client, on a loaded machine, can wait
// longer for that than the HTTP policy's store timeout
// (httplimit.DefaultStoreTimeout, 100 ms), and each such request fails open
// (or closed): reported to the observers, never a silent miscount, but not
// what an operator wants from a deploy. Ping the client (a cluster client: every
// master, with ForEachShard, and once through the client) before taking
// requests, as the example servers do.
//
// A script call is never sent twice after a lost reply (package luascript,
// "Failures"), so go-redis does not retry it; the store retries it itself,
// as the client would retry another command (its MaxRetries, or a cluster
// client's MaxRedirects, with its retry backoff, within the context), when
// the error proves the script did not run: a refused connection, or a
// CLUSTERDOWN, TRYAGAIN, LOADING or MASTERDOWN reply. On a cluster client,
// a failed call also makes the client reload its slot map, so that after a
// master dies and its replica is promoted, decisions reach the new master
// at once rather than after go-redis's periodic reload (a minute).
//
// ParseURL reads the URL forms the example servers and the operator's tool
// (cmd/ratewarden) take, on go-redis's own parsers: redis://, rediss://
// (TLS), with a user, a password, a database and go-redis's query options;
// redis-cluster:// and rediss-cluster://; redis-sentinel:// and
// rediss-sentinel://. WithPasswordFile and WithPassword keep the password out
// of the URL, WithCAFile trusts a private CA, RedactURL hides a password in a
// message, and ExplainError says what a refused password or an unverified
// certificate means. NewRulesBackend
// binds the same client to package rules (module
// github.com/ratewarden/ratewarden/rules), for rules kept in Redis: push them
// with rules.PushRules and keep every instance in step with rules.WatchRedis.
package redisstore
