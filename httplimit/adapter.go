package httplimit

// This file holds what an adapter author needs (see "For adapter authors" in
// the package documentation): the Handler an adapter's Middleware takes, the
// ResponseWriter it writes through, the Pass it finishes, and the optional
// views a request may implement. An application needs none of it.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Handler runs rate limiting on one request, as Policy.Handle describes: what
// the adapters' Middleware functions take. A *Policy, a *Group and a rule set
// (package rules) are Handlers.
type Handler interface {
	Handle(ctx context.Context, r keyfuncs.Request, w ResponseWriter) (Pass, bool)
}

// CheckHandler returns an error wrapping core.ErrInvalidOption for a nil
// Handler or one that is a nil pointer (a nil *Policy): for an adapter's
// Middleware to refuse it when it is built, not on the first request.
func CheckHandler(h Handler) error {
	if h == nil {
		return nilOption("handler")
	}
	if v := reflect.ValueOf(h); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: nil %T", core.ErrInvalidOption, h)
	}
	return nil
}

// HandleAll runs policies on one request, together, and returns what
// Policy.Handle returns: the rules of a Group, for a caller that picks the
// policies of each request (package rules). A nil entry is skipped; HandleAll
// keeps neither policies nor r.
//
// The policies decide in order. When one answers the request (a denial, a
// key error, a failed store under WithFailClosed), the policies before it
// give back what they spent (a refund, reported as OutcomeRefunded) and those
// after it are not asked: a request denied by one policy spends nothing under
// the others. A dry-run policy never answers.
//
// Headers: RateLimit-Policy lists the limits of every policy that applied, in
// order; on an allowed request RateLimit lists each decided policy's state
// and X-RateLimit-* describe the most restrictive one (the least remaining);
// on a denial they describe the policy that denied. With one policy, a
// request is handled exactly as by that Policy alone; with none, it goes on
// with no headers.
func HandleAll(ctx context.Context, r keyfuncs.Request, w ResponseWriter, policies []*Policy) (Pass, bool) {
	if slices.Contains(policies, nil) {
		var buf [maxStackPolicies]*Policy
		kept := buf[:0]
		for _, p := range policies {
			if p != nil {
				kept = append(kept, p)
			}
		}
		policies = kept
	}
	switch len(policies) {
	case 0:
		return Pass{ctx: ctx}, true
	case 1:
		return policies[0].Handle(ctx, r, w)
	}
	return handleMany(ctx, r, w, policies)
}

// ResponseWriter is what Handle writes a response to: the two writing methods
// of http.ResponseWriter, so net/http's, Gin's and Echo's writers serve as
// they are. It must also implement one of two ways to set headers:
//
//   - Header() http.Header, as http.ResponseWriter does: the policy stores
//     its values in the map (values of their own, one allocation per request);
//   - HeaderSetter, for servers without net/http's Header map (fasthttp).
//
// A writer with neither gets no headers.
type ResponseWriter interface {
	// WriteHeader sends the status code.
	WriteHeader(status int)
	// Write sends body bytes after WriteHeader.
	Write(body []byte) (int, error)
}

// HeaderSetter is implemented by a ResponseWriter that sets headers itself
// rather than through net/http's Header map. SetHeaders is called once per
// response, before WriteHeader, with every header to set, and once more when
// an adapter settles a refund with it (Pass.Settle): the second call names
// the rate-limit headers again, and its values replace the first's.
type HeaderSetter interface {
	SetHeaders(h Headers)
}

// Headers are the headers of one response, for a HeaderSetter: Len of them,
// each read with At. Names are canonical (as net/http's Header keys); names
// and values hold no line break. They are valid only during SetHeaders, so the
// writer copies them (fasthttp's SetCanonical does).
type Headers struct {
	o           *outcome
	contentType string // set on an answer with a body type
}

// Len returns the number of headers.
func (h Headers) Len() int {
	if h.contentType != "" {
		return int(h.o.nh) + 1
	}
	return int(h.o.nh)
}

// At returns the i-th header (0 <= i < Len).
func (h Headers) At(i int) (name, value string) {
	o := h.o
	if i >= int(o.nh) {
		return "Content-Type", h.contentType
	}
	c := o.hdrs[i]
	switch k := headerName(c & 0xf); k {
	case hXLimit:
		return HeaderXRateLimitLimit, o.t.perLimit[o.decision.Index].limitVals[0]
	case hPolicy:
		return HeaderRateLimitPolicy, o.t.policyVals[0]
	default:
		return headerNames[k], o.vals[c>>4]
	}
}

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

// Pass is a request Handle let through, for the adapter to finish: the
// context its next handler sees, and, under WithRefund, what to give back
// once the response status is known (Settle) and what to release once that
// handler returned (Finish). It is a small value: with no WithRefund it holds
// only the context. Copies of a Pass share its state.
type Pass struct {
	ctx   context.Context
	o     *outcome     // held for Finish under WithRefund; nil otherwise
	spend spend        // what the request spent, and the in-flight slot it holds (Release)
	group *groupRefund // a Group's members held for Finish under WithRefund
	held  *heldSlots   // the in-flight slots a Group's members hold; nil when none does
}

// Context returns the context the next handler should see.
func (s Pass) Context() context.Context { return s.ctx }

// WantsStatus reports whether Settle and Finish need the response status:
// the policy refunds (WithRefund) and the request was admitted. An adapter
// calls them only then, so that the default path reads no status and wraps
// no writer.
func (s Pass) WantsStatus() bool { return s.o != nil || s.group != nil }

// Settle gives the request's cost back, as Finish would, at the moment the
// response status is known and before the response's headers are sent, and
// then sets the rate-limit headers on w anew to tell the state after the
// refund: X-RateLimit-Remaining, X-RateLimit-Reset and RateLimit (r= and t=;
// a Group's list, with X-RateLimit-* of its most restrictive policy after the
// refunds). Under a Group each policy refunds under its own WithRefund.
//
// An adapter calls it from the writer its next handler writes through, when
// that handler sends the status (WriteHeader, or the first Write or Flush),
// or after the handler returned when the headers are still unsent; w is the
// writer whose headers are still to go out. The first call settles the
// refund: later ones, and the Finish that follows, give nothing back again.
// A refund the predicate does not call for, or that fails (reported as
// Finish reports it), leaves the headers as they were; a nil w sets none.
// Settle does nothing when WantsStatus is false, and must not be called
// after Finish.
func (s Pass) Settle(status int, w ResponseWriter) {
	if s.group != nil {
		s.group.settle(s.ctx, status, w)
		return
	}
	if s.o != nil {
		s.settleOne(status, w)
	}
}

// Finish ends the request after its next handler returned without
// panicking, given the response status: under WithRefund it gives the cost
// back when the policy's predicate holds for status, unless Settle already
// settled the refund. Call it once per Pass, last; it does nothing when
// WantsStatus is false.
func (s Pass) Finish(status int) {
	if s.group != nil {
		s.group.settle(s.ctx, status, nil)
		s.group.release()
		return
	}
	o := s.o
	if o == nil {
		return
	}
	s.settleOne(status, nil)
	o.t.p.release(o)
}

// Arrival is implemented by a request view whose server stamped each request
// with the time it read it (fasthttp's RequestCtx.Time): a limiter on the
// system clock then decides at that instant instead of reading the clock again
// (see core.Limiter.AllowNAt).
type Arrival interface {
	ArrivedAt() time.Time
}

// HeaderPeeker is implemented by a request view whose server keeps headers
// in buffers it reuses (fasthttp), so that its Header must copy: PeekHeader
// returns the value without copying, valid only while the request is being
// decided. The policy reads the Accept header of an answer it writes (a
// denial, a key error, a failed store) this way, and keeps nothing of it.
type HeaderPeeker interface {
	PeekHeader(name string) string
}

// SharedBodyWriter is implemented by a ResponseWriter that can send a body
// without copying it, as fasthttp's Response.SetBodyRaw does: the policy
// writes the body of an answer of its own (a denial, a key error, a failed
// store) through WriteSharedBody instead of Write. The body is never
// modified, and many responses may hold it at once: the writer must not write
// into it. It is the whole body of the response, written once, after
// WriteHeader.
type SharedBodyWriter interface {
	WriteSharedBody(body []byte)
}

// HoldContext is implemented by a request view whose server signals the end of
// a request other than through its context: a held leaky-bucket request stops
// waiting when HoldContext's context ends (fasthttp's RequestCtx, at server
// shutdown) instead of Handle's ctx.
type HoldContext interface {
	HoldContext() context.Context
}

// HangUpChecker is implemented by a request view whose server does not end
// the request's context when its client hangs up (fasthttp): ClientHungUp
// reports, without blocking, whether the client is known to have closed its
// connection. A held leaky-bucket request asks it every HangUpCheckInterval
// while it waits, and once more before it goes on, and is dropped as soon as
// it says so. Only held requests ask: the others cost nothing.
type HangUpChecker interface {
	ClientHungUp() bool
}

// HangUpCheckInterval is how often a held request asks a HangUpChecker
// whether its client is still there: a client that left is noticed within
// this time, at the cost of one check (a system call, for fasthttp) per
// interval per held request.
const HangUpCheckInterval = 100 * time.Millisecond
