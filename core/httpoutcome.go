package core

import (
	"context"
	"strconv"
	"time"
	"unsafe"
)

// HTTPAction is what an adapter does with a request.
type HTTPAction uint8

const (
	// HTTPPass passes the request on to the next handler, after setting the
	// outcome's headers and holding it for the outcome's Delay.
	HTTPPass HTTPAction = iota + 1
	// HTTPRespond answers the request with the outcome's Status, headers,
	// Content-Type and Body; the next handler is not called.
	HTTPRespond
)

// HTTPHeader is one response header an outcome asks for.
type HTTPHeader struct {
	vals []string
	name headerName
}

// headerName indexes headerNames; it keeps outcomes small.
type headerName uint8

const (
	hRetryAfter headerName = iota
	hXLimit
	hXRemaining
	hXReset
	hPolicy
	hRateLimit
)

var headerNames = [...]string{
	hRetryAfter: HeaderRetryAfter,
	hXLimit:     HeaderXRateLimitLimit,
	hXRemaining: HeaderXRateLimitRemain,
	hXReset:     HeaderXRateLimitReset,
	hPolicy:     HeaderRateLimitPolicy,
	hRateLimit:  HeaderRateLimit,
}

// Name returns the canonical header name (as net/http's Header keys).
func (h *HTTPHeader) Name() string { return headerNames[h.name] }

// Value returns the header's value.
func (h *HTTPHeader) Value() string { return h.vals[0] }

// Values returns the value as a one-element slice with no spare capacity,
// ready to be stored in a net/http Header map without allocating. The slice
// may be shared between responses: replace it, never write into it.
func (h *HTTPHeader) Values() []string { return h.vals }

const (
	maxOutcomeHeaders = 6  // Retry-After, 3 X-RateLimit-*, RateLimit-Policy, RateLimit
	maxDynamicHeaders = 4  // Retry-After, X-RateLimit-Remaining, -Reset, RateLimit
	maxInt64Digits    = 20 // with a sign
)

// HTTPOutcome is the policy's verdict on one request: what the adapter must
// do, with which headers. Outcomes are read-only; the policy may share one
// between requests when it carries nothing specific to the request.
type HTTPOutcome struct {
	// Action is what the adapter must do.
	Action HTTPAction
	// Decided reports that the limiter decided the request: false when it was
	// skipped, had no key, or the limiter failed.
	Decided bool
	nh      uint8 // headers used
	nv      uint8 // vals used
	n       uint8 // buf used
	// Status, ContentType and Body are the answer, when Action is HTTPRespond.
	// Body is nil for a HEAD request.
	Status int
	// Decision is the limiter's decision, when Decided. When Action is HTTPPass,
	// Decision.Delay is how long to hold the request before passing it on (the
	// leaky bucket's queue; see Wait).
	Decision    Decision
	ContentType string
	Body        []byte

	parent  context.Context
	headers [maxOutcomeHeaders]HTTPHeader
	vals    [maxDynamicHeaders]string
	buf     [88]byte
}

// Headers returns the headers to set on the response, whatever the action.
// Each name appears once; a header the application already set is replaced.
func (o *HTTPOutcome) Headers() []HTTPHeader { return o.headers[:o.nh] }

// Wait holds the request for Decision.Delay. It returns false when ctx
// ends first (the client went away): the adapter then drops the request.
// Holding uses a real timer.
func (o *HTTPOutcome) Wait(ctx context.Context) bool {
	if o.Decision.Delay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(o.Decision.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Context returns a context derived from parent that carries the outcome's
// decision, for DecisionFromContext. It allocates nothing: the outcome is the
// context. Call it at most once per outcome, and only when Decided.
func (o *HTTPOutcome) Context(parent context.Context) context.Context {
	o.parent = parent
	return outcomeContext{o}
}

func (o *HTTPOutcome) add(h HTTPHeader) {
	o.headers[o.nh] = h
	o.nh++
}

func (o *HTTPOutcome) addDynamic(name headerName, value string) {
	o.vals[o.nv] = value
	o.headers[o.nh] = HTTPHeader{name: name, vals: o.vals[o.nv : o.nv+1 : o.nv+1]}
	o.nv++
	o.nh++
}

// appendInt formats v into the outcome's buffer and returns it as a string.
func (o *HTTPOutcome) appendInt(v int64) string {
	start := int(o.n)
	o.n = uint8(len(strconv.AppendInt(o.buf[:o.n], v, 10)))
	return o.str(start)
}

// str returns buf[start:n] as a string without copying. This is safe because
// a region of buf is written once, before its string is made, and never again:
// the outcome is read-only once Decide returns.
func (o *HTTPOutcome) str(start int) string {
	return unsafe.String(&o.buf[start], int(o.n)-start)
}

// outcomeContext is the context Context returns: the parent, plus the decision.
type outcomeContext struct{ o *HTTPOutcome }

type decisionKey struct{}

func (c outcomeContext) Deadline() (time.Time, bool) { return c.o.parent.Deadline() }
func (c outcomeContext) Done() <-chan struct{}       { return c.o.parent.Done() }
func (c outcomeContext) Err() error                  { return c.o.parent.Err() }
func (c outcomeContext) Value(key any) any {
	if key == (decisionKey{}) {
		return c.o
	}
	return c.o.parent.Value(key)
}

// DecisionFromContext returns the decision the HTTP middleware made for the
// request whose context is ctx, and false when there is none (the request was
// skipped, the limiter failed open, or WithoutDecisionInContext is set).
func DecisionFromContext(ctx context.Context) (Decision, bool) {
	if o, ok := ctx.Value(decisionKey{}).(*HTTPOutcome); ok && o.Decided {
		return o.Decision, true
	}
	return Decision{}, false
}
