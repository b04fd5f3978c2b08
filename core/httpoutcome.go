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
	// outcome's headers and holding it for Decision.Delay (see Wait).
	HTTPPass HTTPAction = iota + 1
	// HTTPRespond answers the request with the outcome's headers and Response;
	// the next handler is not called.
	HTTPRespond
)

// headerName indexes headerNames; it keeps outcomes small.
type headerName uint8

const (
	hRetryAfter headerName = iota
	hXLimit
	hXRemaining
	hXReset
	hPolicy
	hRateLimit
	maxOutcomeHeaders
)

var headerNames = [...]string{
	hRetryAfter: HeaderRetryAfter,
	hXLimit:     HeaderXRateLimitLimit,
	hXRemaining: HeaderXRateLimitRemain,
	hXReset:     HeaderXRateLimitReset,
	hPolicy:     HeaderRateLimitPolicy,
	hRateLimit:  HeaderRateLimit,
}

// HTTPOutcome is the policy's verdict on one request: what the adapter must
// do, with which headers. Outcomes are read-only; the policy shares one
// between requests when it carries nothing specific to the request.
//
// An allowed request costs one allocation: its outcome, which also holds the
// formatted header values and serves as the context of Context (see
// HTTPPolicy.Release).
type HTTPOutcome struct {
	// Action is what the adapter must do.
	Action HTTPAction
	// Decided reports that the limiter decided the request: false when it was
	// skipped, had no key, or the limiter failed.
	Decided bool
	pooled  bool                     // from the policy's pool: may be Released
	nh      uint8                    // headers used
	nv      uint8                    // vals used
	n       uint8                    // buf used
	hdrs    [maxOutcomeHeaders]uint8 // headerName | value slot<<4
	// Decision is the limiter's decision, when Decided. When Action is HTTPPass,
	// Decision.Delay is how long to hold the request before passing it on (the
	// leaky bucket's queue; see Wait).
	Decision Decision
	// Response is the answer when Action is HTTPRespond (its Body is nil for a
	// HEAD request), nil otherwise. It may be shared: never modify it.
	Response *HTTPResponse

	p      *HTTPPolicy
	parent context.Context
	vals   [3]string // reset, remaining, RateLimit
	buf    [64]byte
}

// NumHeaders returns the number of headers to set on the response, whatever
// the action.
func (o *HTTPOutcome) NumHeaders() int { return int(o.nh) }

// Header returns the i-th header to set (0 <= i < NumHeaders): its canonical
// name (as net/http's Header keys) and its value as a one-element slice with
// no spare capacity, ready to be stored in a net/http Header map without
// allocating (a header the application already set is replaced). The slice
// may be shared between responses: replace it, never write into it.
func (o *HTTPOutcome) Header(i int) (name string, values []string) {
	switch k := headerName(o.hdrs[i] & 0xf); k {
	case hXLimit:
		return HeaderXRateLimitLimit, o.p.perLimit[o.Decision.Index].limitVals
	case hPolicy:
		return HeaderRateLimitPolicy, o.p.policyVals
	default:
		j := o.hdrs[i] >> 4
		return headerNames[k], o.vals[j : j+1 : j+1]
	}
}

// Wait holds the request for Decision.Delay. It returns false when ctx ends
// first (the client went away): the adapter then drops the request. Holding
// uses a real timer.
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

func (o *HTTPOutcome) addHeader(k headerName, slot uint8) {
	o.hdrs[o.nh] = uint8(k) | slot<<4
	o.nh++
}

func (o *HTTPOutcome) addValue(v string) uint8 {
	o.vals[o.nv] = v
	o.nv++
	return o.nv - 1
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
// skipped, the limiter failed open, or WithDecisionInContext is not set).
func DecisionFromContext(ctx context.Context) (Decision, bool) {
	if o, ok := ctx.Value(decisionKey{}).(*HTTPOutcome); ok && o.Decided {
		return o.Decision, true
	}
	return Decision{}, false
}
