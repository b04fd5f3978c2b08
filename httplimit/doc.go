// Package httplimit is the framework-neutral policy every ratewarden adapter
// shares, HTTP and gRPC alike: it runs the key function, asks the limiter,
// writes the rate-limit headers and, when the request must not go on, the
// answer. The adapters (stdhttp, ginmw, echomw, echo5mw, fibermw, fiber3mw,
// and grpcmw, which maps the answers to gRPC status codes and metadata) only
// translate: each hands its request and response to [Policy.Handle] once per
// request, and nothing behavioural lives in them, so a request gets the same
// answer in every framework. The name says HTTP because the policy speaks in
// HTTP terms (statuses, headers); gRPC calls are decided by the same rules.
//
// An application needs [New], its options, [Group] and the observers; what
// only an adapter author needs is described at the end, under "For adapter
// authors", and declared in one file (adapter.go).
//
// # Headers and answers
//
// Headers, on allowed (unless WithoutHeadersOnAllowed) and denied responses,
// for the governing limit of the decision (Decision.Limit):
//
//	X-RateLimit-Limit: 100                  the limit's Rate
//	X-RateLimit-Remaining: 0
//	X-RateLimit-Reset: 12                   delta seconds, rounded up
//	RateLimit-Policy: "default";q=100;w=60  every limit of the tier that applied
//	RateLimit: "default";r=0;t=12
//
// RateLimit-Policy and RateLimit follow draft-ietf-httpapi-ratelimit-headers-10
// (structured-field lists of named items; q is the limit's Rate, w its Period
// in whole seconds rounded up). Resets are delta seconds, as the draft's t, not
// epoch times: they need no clock agreement with the client. A denied request
// gets 429 and Retry-After (delta seconds, rounded up, at least 1); on a
// denial the reset and t equal Retry-After, so that Retry-After never points
// earlier than t, as the draft asks. The body is RFC 9457 problem details of
// the draft's quota-exceeded type, naming the violated policy, when the
// client's Accept names a JSON type, and plain text otherwise (WithBodyFormat
// fixes one of the two instead); HEAD gets none.
// No header or body ever holds request data or error text.
//
// The default bodies are exported as building blocks ([ProblemDetails],
// [DeniedProblem], [KeyErrorProblem], [UnavailableProblem], [DefaultDenied]).
// The denial is changed one way, WithDeniedHandler, which renders the answer
// through the framework (Gin's c.JSON, a template) after the policy set the
// headers; WithResponder is its special case for an answer built as a
// Response, which the policy writes (and grpcmw turns into a status code).
// The later of the two given is the one used.
//
// # Keys, failures and dry runs
//
// A request whose key cannot be found gets 401 (WithKeyErrorResponder,
// WithKeyFallback); it is never let through unlimited. A peer address that is
// not an IP (a unix-socket listener; keyfuncs.ErrPeerNotIP) is the server's
// configuration, not the client's fault: it gets 500 and is logged. When the
// limiter fails (store down, WithStoreTimeout's deadline, a negative cost) the
// request passes (fail open, the default) or gets 503 (WithFailClosed) with a
// Retry-After of one second (WithUnavailableRetryAfter). A store that is full
// and refuses new keys (core.ErrStoreFull) is not failing: the request whose
// new key it refused gets that 503 whatever the fail mode, since failing open
// would let a flood of new keys pass unlimited. A leaky-bucket request is held
// for its delay at most WithMaxDelay; a client that leaves meanwhile is
// dropped.
//
// Under WithDryRun every request is decided, spends, is reported and gets
// the truthful headers, but none is denied, delayed or failed closed: the way
// to roll out a new limit.
//
// # Observing and logging
//
// Every decision reaches the observers (WithObserver) as an [Event]: its
// [Outcome] (allowed, denied, dry-run denial, fail-open, fail-closed, key
// error, skipped, refunded, store full, breaker open), the name of the limits that applied (never
// request data: fit for a metric label), the decision, the store's latency
// and the error. Observe runs on the request's goroutine and must not block
// ([NonBlocking] queues events for one that may); a panicking observer is
// recovered, and the observers after it still see the event. The
// metrics/prometheus and metrics/otel modules are observers.
//
// Limiter errors are logged through log/slog (WithLogger; slog.Default()
// otherwise), at most one line per [LogInterval] per kind, with the number
// left out: an outage does not flood the log. So are the store's circuit
// breaker opening and closing (see core.WithBreaker: after repeated
// failures the limiter stops asking the store for a while, and the policy
// applies its fail mode at once). Setting an observer leaves those lines on;
// WithoutStoreErrorLog turns them off. Observer and tier-pick panics and a
// peer that is not an IP are always logged the same way.
//
// # Tiers, refunds and resets
//
// WithTiers picks the limits per request (a plan from a header, a JWT claim,
// a context value) among tiers built with core.Limiter.Tier; headers and
// bodies name the tier that applied, and each tier keeps its own counts.
// WithRefund gives the cost back when a predicate on the response status
// holds ("count only failures"): Handle returns a [Pass] the adapter settles
// with the status before the response's headers go out ([Pass.Settle]), so
// that a refunded response's headers tell the quota after the refund, and
// finishes once the handler returned. [Policy.Reset] unblocks a client under
// every tier; [Policy.Peek] reads its state. WithSettle and WithSettleHeader
// generalise the refund: a request reserves its cost and settles at the real
// cost its response names (a header, or a function of the response), the
// difference given back or charged into the limiter's debt bound
// (core.WithDebt), on the same path ([Pass.Settle]); WithRefund is a settle
// at 0. WithOverrides gives named keys
// their own limits, no limit, or none at all (blocked: 429 with a quota of 0,
// the store never asked).
//
// # In-flight limits
//
// A limiter with an in-flight limit (core.WithInFlight: at most N requests of
// a key running at once, on every instance sharing the store) makes every
// request the rates admit take one of its key's slots, held until its handler
// returns, however it ends (a return, a panic, a client that hung up, a
// timeout). A request that finds every slot taken gets 429 with
// Retry-After: 1 and [HeaderConcurrencyLimit] naming the policy and N, and no
// RateLimit fields (they describe rates); its rates' cost is given back, and
// the observer sees [OutcomeInFlightRefused]. [Policy.SlotsHeld] is the
// gauge the metrics modules export.
//
// # Penalty box
//
// A limiter with a penalty box (core.WithBlockFor) refuses a key its limits
// denied for the block's duration, on every instance sharing the store: the
// policy answers 429 with Retry-After and the RateLimit field's t the
// block's end (or the limits' own wait, when later), and the observer sees [OutcomeBlocked] (the denial that
// started the block is an OutcomeDenied, whose Decision has BlockStarted).
//
// # Several policies
//
// A [Group] applies several policies to each request, each with its own
// counters: the request goes on only when all admit it, and one denied by a
// policy spends nothing under the others. [HandleAll] runs policies chosen
// per request the same way: package rules selects them from a rules document
// (routes, methods, hosts) and swaps the document without a restart. The
// adapters' Middleware functions take any [Handler]: a Policy, a Group, or a
// rule set.
//
// # Cost
//
// A Policy is safe for concurrent use and immutable once built. An allowed or
// denied request costs no allocation in the policy, but for the one block that
// holds its header values (and a denial's Content-Type) when they go into a
// net/http Header map. With no
// observer, tiers or refunds, nothing reads a clock for latency, builds an
// event or learns the response status; an observer costs one call and two
// clock reads per request, a tier pick one call of its function, and a
// refund one store call when the status is known, before the headers go out
// (and, under net/http and Gin, a writer wrapper; under Echo, a Before hook).
//
// # For adapter authors
//
// An adapter turns its framework's request into a keyfuncs.Request and its
// response into a [ResponseWriter], and calls Handle on the [Handler] its
// Middleware was given (checked once with [CheckHandler]). Handle decides,
// sets the headers and writes the answer itself: when it returns false the
// request is finished and the adapter returns; when it returns true the
// adapter calls its next handler with [Pass.Context]. The headers are set
// through the writer's Header() map (net/http, Gin, Echo) or, for a server
// without one (fasthttp, gRPC metadata), through [HeaderSetter], which gets
// them once as [Headers], with [Headers.Decision] for a protocol that states
// a denial in its own terms.
//
// The Pass lifecycle: when [Pass.WantsStatus] is false (no WithRefund, the
// usual case) the adapter is done and need not wrap its writer. Otherwise it
// calls [Pass.Settle] with the status at the moment the next handler sends
// it, before the headers go out, so that a refunded response tells the quota
// after the refund, and [Pass.Finish] once that handler returned without
// panicking (with the final status; Finish refunds only what Settle did not).
// The w given to Settle is also where a settle reads the response header the
// handler set: its Header() map, or, for a writer without one (fasthttp,
// gRPC metadata), [ResponseHeaderReader].
// Whatever WantsStatus says, the adapter defers [Pass.Release] as soon as
// Handle returned true: it gives back the request's in-flight slot when the
// next handler ends, on every path, panics included (a no-op without an
// in-flight limit).
//
// A request view may implement optional interfaces the policy looks for:
// [Arrival] (the server's arrival time, read instead of the clock),
// [HeaderPeeker] (a header read without a copy), [HoldContext] (the context
// that ends a held leaky-bucket request) and [HangUpChecker] (a client's
// hang-up, asked every [HangUpCheckInterval] while a request is held); a
// writer may implement [SharedBodyWriter] (the body of the policy's own
// answers, handed over without a copy).
// Three helpers serve views of servers that hand out a net.Addr and a
// net.Conn (fasthttp, grpc-go): [PeerAddr], a peer's IP text without an
// allocation for a returning IPv4 client, [PeerIP], the peer's address for a
// view's keyfuncs.PeerIPRequest (keyfuncs.IP then reads no text), and
// [ConnHungUp], a peek at the socket that tells a client that hung up. [HandleAll] runs a list of policies chosen per request, as package rules
// does. testing/adaptertest checks an adapter against every case of this
// contract.
package httplimit
