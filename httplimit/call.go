package httplimit

import "github.com/ratewarden/ratewarden/core"

// Decision returns the limiter's decision behind the headers of a response,
// and the name of the limits that made it (the tier, the name
// RateLimit-Policy gives them): for a HeaderSetter whose protocol describes a
// denial in its own terms rather than in header text, as gRPC's
// google.rpc.RetryInfo (d.RetryAfter, the exact wait, where Retry-After is
// rounded up to whole seconds) and google.rpc.QuotaFailure (policy and
// d.Limit) do. On a denial it is the decision that denied; on a response a
// Group let through, the governing one. ok is false when no limiter decided:
// a key error, a failed or full store, an exempt request.
//
// Like the Headers themselves, it is valid only during SetHeaders.
func (h Headers) Decision() (d core.Decision, policy string, ok bool) {
	o := h.o
	if o == nil || !o.decided || o.t == nil {
		return core.Decision{}, "", false
	}
	return o.decision, o.t.name, true
}
