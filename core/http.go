package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// HTTPPolicy is the framework-neutral HTTP behaviour every adapter shares: it
// runs the key function, asks the limiter, and says what the adapter must do
// (pass the request on, hold it, or answer it) with which headers and body.
// Adapters only translate; nothing behavioural lives in them.
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
// (HTTPOutcome.Wait), at most WithMaxDelay.
//
// An HTTPPolicy is safe for concurrent use and immutable once built. An
// allowed request whose outcome the adapter Releases costs no allocation in
// the policy; storing its headers in a net/http Header map (SetHeaders) costs
// one.
type HTTPPolicy struct {
	lim        *Limiter
	key        KeyFunc
	fallback   KeyFunc
	keyResp    func(HTTPRequest, error) HTTPResponse
	responder  func(HTTPRequest, Decision) HTTPResponse
	onError    func(HTTPRequest, error)
	skip       func(HTTPRequest) bool
	cost       func(HTTPRequest) int64
	failClosed bool
	timeout    time.Duration
	maxDelay   time.Duration
	headers    HeaderSet
	onAllowed  bool
	inContext  bool
	pool       sync.Pool // of *HTTPOutcome, for Release

	// Precomputed once: nothing below changes between requests.
	perLimit   []limitHeaders
	policyVals []string // RateLimit-Policy
	// Shared read-only outcomes for answers that carry no per-request data,
	// indexed [JSON][HEAD].
	passOutcome  *HTTPOutcome
	keyOutcomes  [2][2]*HTTPOutcome
	failOutcomes [2][2]*HTTPOutcome
}

// limitHeaders is what never changes for one of the limiter's limits.
type limitHeaders struct {
	limitVals []string // X-RateLimit-Limit
	rlPrefix  string   // `"name";r=`
	denied    [2][2]*HTTPResponse
}

// HeaderSet selects the rate-limit header families a policy writes.
type HeaderSet uint8

const (
	// XRateLimitHeaders are X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (the reset as delta seconds, like the IETF draft's).
	XRateLimitHeaders HeaderSet = 1 << iota
	// IETFHeaders are RateLimit-Policy and RateLimit as defined by
	// draft-ietf-httpapi-ratelimit-headers-10.
	IETFHeaders
	// AllHeaders is both families, the default.
	AllHeaders = XRateLimitHeaders | IETFHeaders
)

// Canonical names of the headers a policy writes (the form net/http's Header
// map keys use; HTTP field names are case-insensitive on the wire).
const (
	HeaderRetryAfter         = "Retry-After"
	HeaderXRateLimitLimit    = "X-Ratelimit-Limit"
	HeaderXRateLimitRemain   = "X-Ratelimit-Remaining"
	HeaderXRateLimitReset    = "X-Ratelimit-Reset"
	HeaderRateLimitPolicy    = "Ratelimit-Policy"
	HeaderRateLimit          = "Ratelimit"
	ContentTypeProblemJSON   = "application/problem+json"
	ContentTypeTextPlain     = "text/plain; charset=utf-8"
	ProblemTypeQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
)

// DefaultStoreTimeout bounds one store call when no WithStoreTimeout is given.
// An in-region Redis answers in about a millisecond; a store still silent after
// 100 ms is failing, and the request should not wait for it (it fails open or
// closed instead). Stores that implement LocalStore get no deadline.
const DefaultStoreTimeout = 100 * time.Millisecond

// LocalStore is implemented by stores that decide in process, without I/O (the
// memory store). The HTTP policy gives their calls no deadline: it could never
// fire, and setting one costs allocations on every request.
type LocalStore interface {
	Local() bool
}

// HTTPResponse is an answer written instead of calling the next handler. The
// policy shares its own between requests: never modify one.
type HTTPResponse struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the Content-Type of Body; empty writes none.
	ContentType string
	// Body is written as is (never to a HEAD request). It must not be modified
	// after it is returned.
	Body []byte
}

// HTTPOption configures an HTTPPolicy.
type HTTPOption func(*HTTPPolicy) error

func nilOption(what string) error { return fmt.Errorf("%w: nil %s", ErrInvalidOption, what) }

// WithKeyFunc sets how a request's key (who the client is) is found. The
// adapters default to the client IP (package keyfuncs, no trusted proxies);
// NewHTTPPolicy itself requires one.
func WithKeyFunc(f KeyFunc) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("key function")
		}
		p.key = f
		return nil
	}
}

// WithKeyFallback sets a key function used when the main one fails: for
// example the client IP when a request carries no API key. When the fallback
// fails too, the key-error response is sent.
func WithKeyFallback(f KeyFunc) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("fallback key function")
		}
		p.fallback = f
		return nil
	}
}

// WithKeyErrorResponder replaces the default answer to a request whose key
// cannot be found (401 with a problem-details or plain-text body). The error
// wraps ErrKey; do not copy its text into the response.
func WithKeyErrorResponder(f func(r HTTPRequest, err error) HTTPResponse) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("key error responder")
		}
		p.keyResp = f
		return nil
	}
}

// WithResponder replaces the default 429 body. The rate-limit headers and
// Retry-After are still set by the policy; a Status of 0 means 429.
func WithResponder(f func(r HTTPRequest, d Decision) HTTPResponse) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("responder")
		}
		p.responder = f
		return nil
	}
}

// WithErrorHandler sets a hook called with every error the limiter returns
// (store down, timeout, a negative cost), before the request fails open or
// closed: log it, count it. It runs on the request's goroutine.
func WithErrorHandler(f func(r HTTPRequest, err error)) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("error handler")
		}
		p.onError = f
		return nil
	}
}

// WithFailClosed answers 503 when the limiter fails. By default the policy
// fails open: the request passes, and the error goes to the error handler.
func WithFailClosed() HTTPOption {
	return func(p *HTTPPolicy) error { p.failClosed = true; return nil }
}

// WithStoreTimeout bounds each store call (default DefaultStoreTimeout); a
// call that times out is a limiter error. 0 sets no deadline beyond the
// request's own.
func WithStoreTimeout(d time.Duration) HTTPOption {
	return func(p *HTTPPolicy) error {
		if d < 0 {
			return fmt.Errorf("%w: negative store timeout %s", ErrInvalidOption, d)
		}
		p.timeout = d
		return nil
	}
}

// WithSkip exempts requests for which f returns true (health checks): they
// pass unlimited and get no rate-limit headers.
func WithSkip(f func(r HTTPRequest) bool) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("skip function")
		}
		p.skip = f
		return nil
	}
}

// WithCost sets what a request spends (default 1). A negative cost is a
// limiter error, handled like a store error; 0 is a peek that spends nothing.
func WithCost(f func(r HTTPRequest) int64) HTTPOption {
	return func(p *HTTPPolicy) error {
		if f == nil {
			return nilOption("cost function")
		}
		p.cost = f
		return nil
	}
}

// WithHeaders selects the rate-limit header families written (default
// AllHeaders; 0 writes none, but a 429 always carries Retry-After).
func WithHeaders(set HeaderSet) HTTPOption {
	return func(p *HTTPPolicy) error {
		if set&^AllHeaders != 0 {
			return fmt.Errorf("%w: unknown header set %d", ErrInvalidOption, set)
		}
		p.headers = set
		return nil
	}
}

// WithoutHeadersOnAllowed writes the rate-limit headers on denied responses
// only.
func WithoutHeadersOnAllowed() HTTPOption {
	return func(p *HTTPPolicy) error { p.onAllowed = false; return nil }
}

// WithMaxDelay bounds how long a leaky-bucket request is held before it is
// passed on: an admitted request whose Delay is longer gets a 429 instead (its
// place in the queue is spent). By default the queue's length is the only
// bound.
func WithMaxDelay(d time.Duration) HTTPOption {
	return func(p *HTTPPolicy) error {
		if d <= 0 {
			return fmt.Errorf("%w: max delay must be positive, got %s", ErrInvalidOption, d)
		}
		p.maxDelay = d
		return nil
	}
}

// WithDecisionInContext makes the adapters put the decision in the request's
// context, for handlers to read with DecisionFromContext or the adapter's
// DecisionFrom. It is off by default because on net/http, Gin and Echo it
// costs a copy of the *http.Request per request (an allocation of about 250
// bytes, the largest cost of the middleware); the rate-limit headers the
// handler's response already carries say the same.
func WithDecisionInContext() HTTPOption {
	return func(p *HTTPPolicy) error { p.inContext = true; return nil }
}

// NewHTTPPolicy returns the policy applying lim to HTTP requests. It returns an
// error wrapping ErrInvalidOption for a nil limiter, a nil or invalid option,
// no key function, or a limit name that cannot be written in a header.
func NewHTTPPolicy(lim *Limiter, opts ...HTTPOption) (*HTTPPolicy, error) {
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", ErrInvalidOption)
	}
	p := &HTTPPolicy{lim: lim, timeout: DefaultStoreTimeout, headers: AllHeaders, onAllowed: true}
	for _, o := range opts {
		if o == nil {
			return nil, nilOption("option")
		}
		if err := o(p); err != nil {
			return nil, err
		}
	}
	if p.key == nil {
		return nil, fmt.Errorf("%w: no key function (use WithKeyFunc)", ErrInvalidOption)
	}
	if ls, ok := lim.Store().(LocalStore); ok && ls.Local() {
		p.timeout = 0
	}
	if err := p.precompute(); err != nil {
		return nil, err
	}
	return p, nil
}

// Limiter returns the policy's limiter.
func (p *HTTPPolicy) Limiter() *Limiter { return p.lim }

// DecisionInContext reports whether adapters put the decision in the request's
// context (see WithDecisionInContext).
func (p *HTTPPolicy) DecisionInContext() bool { return p.inContext }

// Release hands an outcome back for reuse by later Decide calls, which saves
// its allocation. Call it only when nothing refers to the outcome any more:
// its header values were copied (fasthttp's Set copies; SetHeaders gives a
// net/http Header map values of their own, whereas storing Header's values
// there does not). Releasing an outcome the policy shares, or one that
// becomes the request's context (see becomesContext), is a no-op.
func (p *HTTPPolicy) Release(o *HTTPOutcome) {
	if o.pooled && !o.becomesContext() {
		p.pool.Put(o)
	}
}

// Decide runs the policy on one request and says what the adapter must do.
// ctx is the request's context (its end aborts the store call). The outcome is
// read-only, and r is not kept after Decide returns.
func (p *HTTPPolicy) Decide(ctx context.Context, r HTTPRequest) *HTTPOutcome {
	return p.DecideAt(ctx, r, time.Time{})
}

// DecideAt is Decide for a server that stamps each request with the time it
// read it (fasthttp's RequestCtx.Time): arrival, a reading of time.Now. A
// limiter on the SystemClock decides at arrival instead of reading the clock
// again; one on any other clock reads its own, and a zero arrival is ignored.
func (p *HTTPPolicy) DecideAt(ctx context.Context, r HTTPRequest, arrival time.Time) *HTTPOutcome {
	if p.skip != nil && p.skip(r) {
		return p.passOutcome
	}
	key, err := p.key(r)
	if err != nil && p.fallback != nil {
		key, err = p.fallback(r)
	}
	if err != nil {
		return p.keyError(r, err)
	}
	cost := int64(1)
	if p.cost != nil {
		cost = p.cost(r)
	}
	var d Decision
	if p.timeout > 0 {
		cctx, cancel := context.WithTimeout(ctx, p.timeout)
		d, err = p.lim.allowAt(cctx, key, cost, arrival)
		cancel()
	} else {
		d, err = p.lim.allowAt(ctx, key, cost, arrival)
	}
	if err != nil {
		return p.limiterError(r, err)
	}
	if d.Allowed && p.maxDelay > 0 && d.Delay > p.maxDelay {
		d.Allowed, d.RetryAfter, d.Delay = false, d.Delay, 0
	}
	o, _ := p.pool.Get().(*HTTPOutcome)
	if o == nil {
		o = &HTTPOutcome{pooled: true, p: p}
	} else {
		// What Release left is stale: reset all but vals and buf, which are
		// written before they are read (nv and n say how much is used).
		o.nh, o.nv, o.n, o.spilled, o.Response, o.parent = 0, 0, 0, false, nil, nil
	}
	o.Action, o.Decided, o.Decision = HTTPPass, true, d
	if d.Allowed {
		if p.onAllowed {
			p.setHeaders(o, &d)
		}
		return o
	}
	p.setHeaders(o, &d)
	o.Action = HTTPRespond
	head := r.Method() == "HEAD"
	switch {
	case p.responder != nil:
		o.Response = response(p.responder(r, d), 429, head)
	case acceptsJSON(r.Header("Accept")):
		o.Response = p.perLimit[d.Index].denied[1][b2i(head)]
	default:
		o.Response = p.perLimit[d.Index].denied[0][b2i(head)]
	}
	return o
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *HTTPPolicy) keyError(r HTTPRequest, err error) *HTTPOutcome {
	head := r.Method() == "HEAD"
	if p.keyResp == nil {
		return p.keyOutcomes[b2i(acceptsJSON(r.Header("Accept")))][b2i(head)]
	}
	if !errors.Is(err, ErrKey) {
		err = fmt.Errorf("%w: %w", ErrKey, err)
	}
	return &HTTPOutcome{Action: HTTPRespond, Response: response(p.keyResp(r, err), 401, head)}
}

func (p *HTTPPolicy) limiterError(r HTTPRequest, err error) *HTTPOutcome {
	if p.onError != nil {
		p.onError(r, err)
	}
	if !p.failClosed {
		return p.passOutcome
	}
	return p.failOutcomes[b2i(acceptsJSON(r.Header("Accept")))][b2i(r.Method() == "HEAD")]
}

// response completes a responder's answer: a default status, no body to HEAD.
func response(resp HTTPResponse, status int, head bool) *HTTPResponse {
	if resp.Status == 0 {
		resp.Status = status
	}
	if head {
		resp.Body = nil
	}
	return &resp
}

// setHeaders fills o's headers for d. Values that change per request are
// formatted once, into o.buf: with the IETF headers on, the RateLimit field
// is written whole and the remaining and reset figures are slices of it. The
// other values were built once by precompute.
func (p *HTTPPolicy) setHeaders(o *HTTPOutcome, d *Decision) {
	lh := &p.perLimit[d.Index]
	remaining := max(d.Remaining, 0)
	reset := ceilSeconds(d.ResetAfter)
	if !d.Allowed {
		// Retry-After must not point earlier than the draft's reset (t), so on a
		// denial both say when the request could pass.
		reset = max(ceilSeconds(d.RetryAfter), 1)
	}
	ietf := p.headers&IETFHeaders != 0
	var resetSlot, remSlot, rlSlot uint8
	if ietf {
		// "name";r=<remaining>;t=<reset>. A long limit name overflows o.buf:
		// append then moves the field to the heap, with an allocation.
		b := append(o.buf[:0], lh.rlPrefix...)
		r0 := len(b)
		b = strconv.AppendInt(b, remaining, 10)
		r1 := len(b)
		b = append(b, ";t="...)
		t0 := len(b)
		b = strconv.AppendInt(b, reset, 10)
		if cap(b) == len(o.buf) {
			o.n = uint8(len(b))
		} else {
			o.spilled = true
		}
		// b is never written again: the strings below may share it.
		field := unsafe.String(&b[0], len(b))
		resetSlot = o.addValue(field[t0:], uint8(t0))
		remSlot = o.addValue(field[r0:r1], uint8(r0))
		rlSlot = o.addValue(field, 0)
	} else {
		resetSlot = o.appendInt(reset)
		remSlot = o.appendInt(remaining)
	}
	if !d.Allowed {
		o.addHeader(hRetryAfter, resetSlot)
	}
	if p.headers&XRateLimitHeaders != 0 {
		o.addHeader(hXLimit, 0)
		o.addHeader(hXRemaining, remSlot)
		o.addHeader(hXReset, resetSlot)
	}
	if ietf {
		o.addHeader(hPolicy, 0)
		o.addHeader(hRateLimit, rlSlot)
	}
}

// ceilSeconds rounds d up to whole seconds, as delay-seconds fields want.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
