// Package httplimit is the framework-neutral HTTP behaviour every ratewarden
// adapter shares: it runs the key function, asks the limiter, writes the
// rate-limit headers and, when the request must not go on, the answer. The
// adapters (stdhttp, ginmw, echomw, fibermw) only translate: each hands its
// request and response to [Policy.Handle] once per request, and nothing
// behavioural lives in them, so a request gets the same answer in every
// framework.
//
// Headers, on allowed (unless WithoutHeadersOnAllowed) and denied responses,
// for the governing limit of the decision (Decision.Limit):
//
//	X-RateLimit-Limit: 100                  the limit's Rate
//	X-RateLimit-Remaining: 0
//	X-RateLimit-Reset: 12                   delta seconds, rounded up
//	RateLimit-Policy: "default";q=100;w=60  every limit of the limiter
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
// client's Accept names a JSON type, and plain text otherwise; HEAD gets none.
// No header or body ever holds request data or error text.
//
// A request whose key cannot be found gets 401 (WithKeyErrorResponder,
// WithKeyFallback); it is never let through unlimited. When the limiter fails
// (store down, WithStoreTimeout's deadline, a negative cost), the error goes to
// WithErrorHandler's hook and the request passes (fail open, the default) or
// gets 503 (WithFailClosed). A leaky-bucket request is held for its delay
// at most WithMaxDelay; a client that leaves meanwhile is dropped.
//
// A Policy is safe for concurrent use and immutable once built. An allowed
// request costs no allocation in the policy, but for the one block that holds
// its header values when they go into a net/http Header map.
package httplimit
