// Package luascript is ratewarden's Redis store: the Lua scripts that apply the
// six algorithms inside Redis, their encoding, and Store, the core.Store (and
// core.Resetter) that runs them, for applications that run on more than one
// instance and must share one exact limit. It depends on no Redis client: a
// Store sends each script call through a Backend, one method that a binding
// of a client implements in about 40 lines. Package store/redis (package
// redisstore) binds go-redis v9 and store/rueidis (package rueidisstore)
// binds rueidis; both return a *Store, so they run the same scripts on the same
// keys, decide identically, and can share a Redis:
//
//	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
//	store, err := redisstore.New(client, luascript.WithPrefix("myapp:rl:"))
//	limiter, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10))
//
// # One atomic round trip per decision
//
// Each algorithm is one script that reads the key's state, decides exactly as
// core.Algorithm.ApplyAll does (with several limits it tests all of them and
// writes only when every one admits), and writes the state back, all inside
// Redis: there is no get-then-set, and concurrent requests from any number of
// instances never both spend the same quota. A Backend sends EVALSHA; when
// Redis answers NOSCRIPT (it restarted, was flushed, or a cluster node is new)
// it sends the script once with EVAL, which also caches it.
//
// A refund (core.Limiter.Refund: a TakeRequest with a negative Cost) is one
// call too: the algorithm's script gives the cost back by core's rules and
// replies as a peek of the state it left. The call carries the admission's
// age (TakeRequest.Now minus Admitted) rather than its instant, and the script
// places the admission at Redis's now minus that age, so a clock skew between
// the application and Redis never moves a refund into another window. The
// age is measured between two calls that each took their own time to reach
// Redis, so on Redis's clock it is off by their difference: for the sliding
// log, whose entries sit at the exact µs Redis admitted them, the admission is
// placed up to a tenth of the shortest period (at most a second) later, so a
// refund still finds its entries (an entry that much newer may go in their
// place). The spend path pays one comparison for refunds.
//
// A request with a calendar limit (core.Monthly and friends) runs the
// calendar window script (calendar_lua.go): Redis has no time zone
// database, so the call carries each calendar limit's window bounds around
// the application's clock, and the script picks the window holding Redis's
// TIME among three; when the clocks differ by more than a window it writes
// nothing and the store sends the bounds around Redis's now.
//
// # Replies
//
// Every script replies with integers, nearly all with an array of them. The
// meter scripts (token bucket, leaky bucket, GCRA) and the window scripts
// (fixed and sliding window) reply {allowed, now, the state each limit had
// before the request...}, and
// the Store rebuilds the whole Decision with core itself, so the remaining
// quota, the reset and retry times and the governing limit are computed once,
// in Go, exactly as the memory store computes them. The sliding log's script
// replies with the Decision instead ({allowed, exceeds, governing index,
// remaining, reset-after µs, retry-after µs}), because its state is a list of
// up to Rate timestamps that core needs whole to decide: sending it back would
// make every reply as long as the limit's rate. The reset script replies {the
// number of keys deleted}.
//
// A request of one limit without a penalty box, nearly every request, runs a
// script of its own (each algorithm's "+one" script, marked
// Script.IntegerReply; the sliding log has none) that replies with one
// integer instead, when the Backend reads such replies (IntegerReplier, as
// the go-redis and rueidis bindings do): for a meter, the time the state held
// beyond the script's now (max(T - now, 0)); for a window whose figures fit
// (the counts below twice the rate, times the period, below 2^52), its count
// or counts and the time since its start, packed. The integer is negative,
// -1 minus that, for a denial. A table reply costs Redis more than the
// integers in it, and nothing else in such a Decision depends on the state.
//
// # Time and numbers
//
// Times are whole microseconds. By default a script reads the server's TIME
// (seconds*1e6 + microseconds), so instances whose clocks disagree still share
// one consistent limit; WithCallerClock uses TakeRequest.Now (the limiter's
// clock) instead, which some managed Redis services (that refuse TIME in
// scripts) and tests with a manual clock need. Lua's numbers are doubles: core
// bounds every value below 2^53, where doubles are exact, and the per-limit
// figures that need a division (the emission interval, rounded up, and tau =
// burst x interval) are computed in Go and passed as arguments, so a script
// never divides to get them.
//
// # Keys
//
// Keys look like rw:{namespace:key}:g (prefix, hash tag, a letter for the
// algorithm, and ":<number of limits>:<index>" appended when a request has
// several limits); they name no limit figures, so a client's state under a
// policy stays where it is when the policy's rate, period or burst is
// edited, and the scripts re-express it under the new figures (as
// core.TakeRequest.Reexpress says: a meter keeps the requests it owes, a
// window its counts, a log its entries). They are short because Redis's
// memory per key is mostly its name. The letters are t (token bucket), l
// (leaky bucket), g (GCRA), f (fixed window), w (sliding window) and s
// (sliding log). The hash tag puts all keys of one request in one Redis
// Cluster slot, so several limits on one request never cause CROSSSLOT; '%',
// '{' and '}' in a client's key are escaped (and ':', '#' and NUL in the
// namespace), and a tag longer than 128 bytes is replaced by its SHA-256.
// Every key expires (PEXPIRE / SET PX) when its state equals a fresh one, as
// core.Algorithm.FreshAt says, rounded up to the millisecond (WithMinTTL sets
// a floor): nothing lives forever. The token bucket, leaky bucket and GCRA
// keep the text "T I", the instant the meter is full again and the emission
// interval it was written under; the fixed and sliding windows keep "I N P
// D", the window's index, its count, the previous count and the period it
// was written under (windowstate.go); the sliding log keeps a list of at
// most Rate timestamps. Redis keeps such short text in one allocation with
// its object header, so a meter's or a window's key costs Redis its name and
// about 70 bytes. Store.Keys
// names the keys of a request.
//
// # Failures
//
// Errors wrap ErrRedis, or core's sentinels for invalid requests, which are
// refused without a call to Redis. A call honours its context's deadline and
// cancellation. A script call that may have run is never sent twice: a
// client that retries a command after a network error would, for a decision
// whose reply was lost, count the request twice, so each binding turns its
// client's retries off for the script call. MOVED and ASK redirections, which
// mean the script did not run, are still followed, and each binding sends the
// call again when its error proves the script did not run: a refused
// connection, or a CLUSTERDOWN, TRYAGAIN, LOADING or MASTERDOWN reply.
// Whether to fail open or closed is the HTTP layer's choice; the store only
// reports.
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
// ResetAfter down but repeat the Remaining of the denial. A key's denials
// share one slot whatever their algorithm, limits and cost, so the cache
// holds one denial per key.
//
// # Resets and refunds reach every instance
//
// A reset or a refund frees quota that cached denials say is spent. The
// script that runs it announces it: it PUBLISHes a 16-hex-digit digest of
// the key (namespace and key) on the channel <prefix>{resets}:announce. A
// classic PUBLISH, which Redis Cluster broadcasts to every node, so a
// subscriber on any node hears it (SPUBLISH would reach only the key's
// shard); it adds well under a microsecond to the call's cost in Redis
// (0.3 to 0.5 µs measured, with no subscriber or two). This store
// drops its own cached denials of the key when the call returns, and every
// store that follows the channel (Store.FollowResets, which an application
// runs on a goroutine of its own; the go-redis and rueidis bindings can
// subscribe) drops its own at once, whatever algorithm, limits and cost
// they were cached for. A denial whose call was sent before a drop is never
// cached, even when its reply comes after the drop: each cache slot has a
// generation, read before the call is sent and bumped by a drop. A store
// whose subscription broke missed the announcements sent meanwhile, so it
// drops its whole cache when the subscription ends and when it is renewed.
// A store that does not follow the channel keeps the denials it cached
// until their RetryAfter: after a reset or refund elsewhere it may deny a
// little longer than Redis would, never less.
//
// # Writing a binding
//
// A binding implements Backend.Eval for its client, sending EVALSHA and, on
// NOSCRIPT, EVAL, never replaying a call that may have reached the server,
// and hands it to New. Scripts lists the scripts, for a binding that loads them
// ahead of use. A binding whose client can subscribe implements Subscriber
// too, for FollowResets. Package testing/redistest checks a Backend (redistest.Backend)
// and the store over it against a real Redis.
package luascript
