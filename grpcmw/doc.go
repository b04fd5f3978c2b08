// Package grpcmw is ratewarden's interceptors for gRPC servers. It shares
// the HTTP policy: every call goes through the same httplimit.Handler (a
// Policy, a Group, or a rules.Set) as an HTTP request does, so keys, tiers,
// overrides, rules documents, observers and metrics, dry runs, fail modes,
// refunds and the stores' denial cache behave exactly as in the net/http,
// Gin, Echo and Fiber adapters; only the translation is gRPC's.
//
//	grpc.NewServer(grpcmw.PerIP("100/m").ServerOptions()...)
//
// # A call as the policy sees it
//
// A call is presented as an HTTP request (keyfuncs.Request): Method is
// "POST"; Path and Route are the full method, "/pkg.Service/Method"; Header
// and HeaderValues read the incoming metadata (keys are lower-cased, so
// keyfuncs.Header("X-Api-Key") reads "x-api-key", and jwt.Subject reads the
// "authorization" entry); RemoteAddr is the peer's IP; Host the :authority;
// Context the call's context. So the key functions of package keyfuncs work
// as they are: keyfuncs.IP (the peer; with WithTrustedProxies, the client a
// trusted gateway names in x-forwarded-for metadata, never believed from an
// untrusted peer), keyfuncs.Header, keyfuncs.ContextValue (a value an
// authentication interceptor stored), keyfuncs.Route (the full method), and
// jwt.Subject. A peer that is not an IP (a unix socket, bufconn) is the same
// key error as over HTTP. httplimit.WithSkip exempts calls by full method,
// as for the health service. Rules documents match a call as a POST of path
// "/pkg.Service/Method" (docs/rules.md, "gRPC"), so one document serves
// HTTP and gRPC.
//
// # Answers
//
// Every call the policy decides carries the rate-limit fields as header
// metadata, allowed or not: ratelimit-policy and ratelimit (the IETF
// syntax, as over HTTP), x-ratelimit-limit, x-ratelimit-remaining and
// x-ratelimit-reset (unless httplimit.WithHeaders leaves them out), and
// retry-after (whole seconds, rounded up) on a denial. A call the policy does
// not let through returns a status, and its handler never runs:
//
//	denied                  ResourceExhausted, with google.rpc.RetryInfo (the
//	                        exact wait, never 0, never rounded down) and
//	                        google.rpc.QuotaFailure (one violation, for the
//	                        policy that denied: subject its name, quota_id the
//	                        limit's name, quota_value its rate; never the key)
//	store down, fail closed Unavailable, with RetryInfo
//	                        (httplimit.WithUnavailableRetryAfter)
//	store full              Unavailable, with RetryInfo
//	no key (missing or      Unauthenticated
//	  invalid credentials)
//	peer not an IP          Internal (the server's configuration)
//	held, client left       Canceled, or DeadlineExceeded
//
// A denial or key-error answer of the application's own (WithDeniedHandler,
// whose WriteHeader status counts, or its special case WithResponder, and
// WithKeyErrorResponder) chooses an HTTP status, which Code maps to a gRPC
// code (a denied handler that writes no status leaves ResourceExhausted);
// bodies are never sent. Under a dry run nothing is denied.
//
// # Refunds
//
// Under httplimit.WithRefund (a rules policy's count: failures) a call that
// ends with a status the predicate names gives its cost back: the predicate
// sees HTTPStatus of the call's code (OK 200, InvalidArgument 400,
// Unauthenticated 401, PermissionDenied 403, NotFound 404, ResourceExhausted
// 429, Internal and Unknown 500, Unavailable 503, ...).
//
// gRPC sends the header metadata before the call's status is known: with
// the first response message, when the handler calls grpc.SendHeader, or at
// the latest with the status, and what was set with grpc.SetHeader cannot be
// replaced, only added to. So a refunded call's header fields tell the quota
// as the call was admitted, before the refund; the interceptors then put the
// same fields, telling the quota after the refund (x-ratelimit-remaining,
// x-ratelimit-reset, ratelimit; x-ratelimit-limit and ratelimit-policy too),
// in the call's trailer metadata, which goes out with the status. A client
// that reads the trailer (grpc.Trailer, or the stream's Trailer) when it is
// there and the header otherwise reads the truth. A call given nothing back
// (a failure, or a refund that failed) gets no rate-limit trailer.
//
// # Streams
//
// A stream is decided when it opens; with WithMessages each message it
// receives is decided too, and one over the limit ends the stream with
// ResourceExhausted.
package grpcmw
