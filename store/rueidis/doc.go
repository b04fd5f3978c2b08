// Package rueidisstore is a ratewarden store (core.Store, core.Resetter) that
// keeps every key's state in Redis, for applications that run on more than one
// instance and must share one exact limit. It is built on rueidis, whose client
// pipelines concurrent calls on a few shared connections (auto-pipelining):
// under many concurrent requests it decides more per second than a
// connection-pool client. It accepts any rueidis.Client: a single node,
// Sentinel or Redis Cluster. Users of go-redis take package store/redis
// instead; both are thin bindings over package store/luascript, so they run
// the same scripts on the same keys and decide identically.
//
//	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
//	store, err := rueidisstore.New(client)
//	limiter, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10))
//
// # One atomic round trip per decision
//
// Each of the six algorithms is one Lua script that reads the key's state,
// decides exactly as core.Algorithm.ApplyAll does, and writes it back, all
// inside Redis: there is no get-then-set, and concurrent requests from any
// number of instances never both spend the same quota. The store sends
// EVALSHA; when Redis answers NOSCRIPT (it restarted, was flushed, or a cluster
// node is new) it sends the script once with EVAL, which also caches it.
//
// # Time
//
// By default the scripts read Redis's TIME, so instances whose clocks disagree
// still share one consistent limit. WithCallerClock uses the limiter's clock
// instead (see its doc for the effect of skew); some managed Redis services
// refuse TIME in scripts, and tests with a manual clock need it.
//
// # Keys
//
// Keys look like ratewarden:{namespace:key}:gcra:10/1000000/10 (prefix, hash
// tag, algorithm, limits). The hash tag puts all keys of one request in one
// cluster slot, so several limits on one request never cause CROSSSLOT; braces
// in a client's key are escaped, and keys longer than 128 bytes are replaced by
// their SHA-256. Every key expires when its state equals a fresh one: nothing
// lives forever.
//
// # Failures
//
// Errors wrap ErrRedis (or, for invalid requests, core's sentinels, without a
// call to Redis). A call honours its context's deadline and cancellation:
// rueidis returns the context's error as soon as it is done, even while the
// command waits in a pipeline. A script call is never sent twice: rueidis
// retries after a network error only commands marked retryable, and the
// store's script commands are not, so a decision whose reply was lost is
// reported as an error rather than counted twice; MOVED and ASK redirections,
// which mean the script did not run, are still followed. Whether to fail open
// or closed is the HTTP layer's choice; the store only reports.
//
// # Local cache of denials
//
// A key that is denied is usually asked again at once (a client hammering, a
// flood). The store remembers each denial (WithLocalCache, on by default,
// DefaultLocalCacheSize entries, direct-mapped and bounded whatever the keys'
// length) and, until its RetryAfter has passed, answers the same request (same
// namespace, key, algorithm, limits and cost) locally, with no round trip.
// This never admits more than Redis would: it only ever denies, and a denial
// stays true until RetryAfter because in every algorithm the state only gets
// fuller between two decisions (admitted requests add to it; denied ones
// change nothing) until time frees quota, and RetryAfter is the first instant
// at which time alone frees enough. The countdown starts when the denied call
// was sent, before Redis decided, so the local denial ends no later than
// Redis's. A denial for a cost of n says nothing about a smaller cost, so the
// cost is part of what must match. Answers from the cache count RetryAfter and
// ResetAfter down but repeat the Remaining of the denial. Reset clears this
// store's entry for the key; denials cached by other instances end at their
// RetryAfter.
package rueidisstore
