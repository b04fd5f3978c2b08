// Package rules says which rate limit applies to which request, in a
// document kept outside the code: a file, or Redis, changed without a
// redeploy.
//
// # The document
//
// A rules document (YAML or JSON; docs/rules.md is its reference and
// [Schema] its JSON Schema) names policies. Each says which requests it
// matches (route patterns, path prefixes, methods, hosts, headers), whose key
// counts (the client IP, a header, a JWT claim, a context value, or a
// composition), the algorithm and its limits, tiers picked per request,
// per-key overrides, cost, dry run and fail mode, and which other policies
// it replaces. In this package "key" is that rate-limit key; the Go value a
// context value is stored under is a context value key (WithContextValueKey).
//
// [Parse] reads a document into a [Document], applying its defaults to every
// policy, and validates it: a document that fails is refused with a
// [*Problems] that lists every problem at once, each with its line, column
// and path ("rules.yaml:12:14: policies[1].limits[0]: ..."). Limits are read
// and checked exactly as in Go ([core.ParseLimit], the algorithm's own
// checks). Bounds ([MaxDocumentSize], [MaxDepth], [MaxAliasNodes] and the
// rest) keep a hostile or broken document from costing much time or memory.
// [Document.Validate] runs the same checks on a Document built in Go;
// [ReadFile] reads and parses a file.
//
// # The rules in force
//
// [New] compiles a document into a [Set] on a store: each policy gets a
// limiter of its own, namespaced by the policy's name, so two policies never
// share a counter. The Set is an httplimit.Handler: the adapters'
// Middleware functions (stdhttp, ginmw, echomw, fibermw) take it as they take
// a policy. On each request every policy whose match holds decides, each
// with its own counter, and the request goes on only when every one admits
// it; a request one policy denies spends nothing under the others (what the
// policies before it spent is refunded at once, and those after it are not
// asked). RateLimit-Policy names every policy that applied; on a 429,
// RateLimit and the problem body name the one that denied. Paths are matched
// normalised ("//", "/./", "/../" and percent-encoded unreserved characters
// resolved), the same way in every adapter, with no regular expression,
// without regard to ASCII case or a trailing "/", and a policy on GET also
// matches HEAD. A path with "." or ".." segments is matched with them kept
// too, and a route pattern also governs every request routed to that route
// when the adapter tells the route its router matched
// (keyfuncs.MatchedRouteRequest: echomw, echo5mw, ginmw, fiber3mw on a
// route), because Echo, Gin and Fiber route "/users/.." and Echo
// "/users/7/x" to "/users/:id".
//
// [Set.Load] and [Set.Replace] swap in a new document atomically: a request
// sees the old rules or the new, never a mix, and a policy whose limits did
// not change keeps its counters. A document that fails is refused, the reload
// hook ([WithReloadHook]) and the log hear why, and the rules in force stay.
// [Set.Reset] and [Set.Peek] reach a client's counters under a policy.
//
// # Identity
//
// A document is identified by its version and its content digest
// ([Document.Digest]: the SHA-256 of its canonical form, so that the same
// rules in YAML or JSON, commented or not, have one digest). Two documents
// of one version must be the same rules: [Set.Load] refuses the version in
// force with another digest ([ErrVersionConflict]) and, unless
// [AllowDowngrade], an older version ([ErrDowngrade]); [PushRules] refuses a
// push of the stored version with another digest; a [RedisWatcher] whose
// rules in force disagree with Redis's follows Redis and logs both. The
// version and digest in force are on [Set.Identity], in every [Reload], and
// reach every observer that implements [RulesObserver] (the metrics
// modules' gauge).
//
// # Sources
//
// [WatchFile] keeps a Set loaded from a file: it reloads on every change,
// whether an editor renames a new file over the old one, a program rewrites
// it in place (a half-written file is refused, then loaded once whole) or a
// Kubernetes ConfigMap swaps its ..data symlink, and on demand
// ([FileWatcher.Reload], for SIGHUP).
//
// [PushRules] stores a document in Redis (the operator's tool, cmd/ratewarden,
// does it from the command line): validated, then stored with its version and
// digest and announced on a channel in one script that refuses an older
// version, and the stored version with other rules. [WatchRedis] keeps a Set in step with Redis: it loads at
// start (or a fallback file while Redis cannot answer), on every announcement,
// and on a poll of the version, since an announcement is delivered at most
// once; it resubscribes when its connection is lost. Package rules imports no
// Redis client: a [RedisBackend] is two methods, which store/redis and
// store/rueidis implement (NewRulesBackend).
package rules

// The files read in the order a document travels: doc_*.go the document (its
// types, parsing and the locations of its nodes, problems, validation,
// digest, counter changes), match_*.go which of its policies apply to a
// request (the Matcher, over URL paths and route patterns), set*.go the rules
// in force (compiling a document, swapping it, what a Set reports), and
// source_*.go where documents come from (a file, Redis), through the Set's
// public methods.
