package httplimit

import (
	"context"
	"net/http"
	"time"
	"unsafe"

	"github.com/ratewarden/ratewarden/core"
)

// action is what an adapter does with a request.
type action uint8

const (
	// actionPass passes the request on to the next handler, after setting the
	// outcome's headers and holding it for Decision.Delay (see wait).
	actionPass action = iota + 1
	// actionRespond answers the request with the outcome's headers and Response;
	// the next handler is not called.
	actionRespond
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
	hConcurrency
	maxOutcomeHeaders
)

var headerNames = [...]string{
	hRetryAfter:  HeaderRetryAfter,
	hXLimit:      HeaderXRateLimitLimit,
	hXRemaining:  HeaderXRateLimitRemain,
	hXReset:      HeaderXRateLimitReset,
	hPolicy:      HeaderRateLimitPolicy,
	hRateLimit:   HeaderRateLimit,
	hConcurrency: HeaderConcurrencyLimit,
}

// outcome is the policy's verdict on one request: what to do with it, with
// which headers. An outcome is read-only once decide returns; the policy
// shares one between requests when it carries nothing specific to the
// request, and pools the others (see release).
//
// An outcome holds the formatted header values and, with
// WithDecisionInContext, serves as the request's context.
type outcome struct {
	action  action
	decided bool                     // the limiter decided: not skipped, keyed and no error
	pooled  bool                     // from the policy's pool: may be released
	nh      uint8                    // headers used
	nv      uint8                    // vals used
	n       uint8                    // buf used
	spilled bool                     // vals lie off buf (a long RateLimit field)
	refund  bool                     // admitted under WithRefund: Pass.Finish may refund it
	settled bool                     // the refund was settled (Pass.Settle): nothing more to give back
	hdrs    [maxOutcomeHeaders]uint8 // headerName | value slot<<4
	start   [outcomeVals]uint8       // where each of vals starts in buf
	// decision is the limiter's decision, when decided. When action is
	// actionPass, decision.Delay is how long to hold the request (the leaky
	// bucket's queue).
	decision core.Decision
	// response is the answer when action is actionRespond (its Body is nil for
	// a HEAD request), nil otherwise. It may be shared: never modify it.
	response *Response

	t      *tier // the tier that decided, when decided
	parent context.Context
	vals   [outcomeVals]string // reset, remaining, RateLimit (a value may serve two headers)
	buf    [outcomeBufLen]byte
}

// outcomeBufLen is the room for an outcome's formatted values: the RateLimit
// field of a limit named up to 2 bytes whatever its figures, or up to 29
// bytes with up to 6 digits remaining and 5 digits of reset (a longer one
// costs an allocation). It keeps an outcome within 256 bytes.
const outcomeBufLen = 48

// outcomeVals is the number of per-request values: reset, remaining, RateLimit.
const outcomeVals = 3

// numHeaders returns the number of headers to set on the response, whatever
// the action.
func (o *outcome) numHeaders() int { return int(o.nh) }

// header returns the i-th header to set (0 <= i < numHeaders): its canonical
// name (as net/http's Header keys) and its value as a one-element slice with
// no spare capacity. The value lies in the outcome: it is valid until the
// outcome is released, so the writer must copy it (HeaderSetter's contract).
// The slice may be shared between responses: never write into it.
func (o *outcome) header(i int) (name string, values []string) {
	switch k := headerName(o.hdrs[i] & 0xf); k {
	case hXLimit:
		return HeaderXRateLimitLimit, o.t.perLimit[o.decision.Index].limitVals
	case hPolicy:
		return HeaderRateLimitPolicy, o.t.policyVals
	default:
		j := o.hdrs[i] >> 4
		return headerNames[k], o.vals[j : j+1 : j+1]
	}
}

// wait holds the request for decision.Delay. It returns false when ctx ends
// first, or when hc, unless nil, reports that the client hung up, checked
// every HangUpCheckInterval and at the end: the client went away, and the
// request is dropped. Holding uses a real timer.
func (o *outcome) wait(ctx context.Context, hc HangUpChecker) bool {
	if o.decision.Delay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(o.decision.Delay)
	defer t.Stop()
	var check <-chan time.Time
	if hc != nil {
		tick := time.NewTicker(HangUpCheckInterval)
		defer tick.Stop()
		check = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return hc == nil || !hc.ClientHungUp()
		case <-check:
			if hc.ClientHungUp() {
				return false
			}
		}
	}
}

// asContext returns a context derived from parent that carries the outcome's
// decision, for DecisionFromContext. It allocates nothing: the outcome is the
// context. Call it at most once per outcome, and only when decided.
func (o *outcome) asContext(parent context.Context) context.Context {
	o.parent = parent
	return outcomeContext{o}
}

// becomesContext reports whether o is handed to the request as its
// context: WithDecisionInContext and a decided outcome that lets the request
// pass. Such an outcome is never reused, so nothing need be copied out of it.
func (o *outcome) becomesContext() bool {
	return o.decided && o.action != actionRespond && o.t != nil && o.t.p.inContext
}

// setHeaderMap stores the outcome's headers in h, a net/http Header map
// (replacing any value the application set there), with values that stay
// valid after the outcome is released, and the Content-Type of an answer
// unless contentType is empty. Every field gets a slice of its own, shared
// with no other response: a handler that writes into one (h[name][0] = ...)
// changes its own response only. It costs one allocation. An outcome that
// becomes the request's context is never reused, so h shares its per-request
// values.
func (o *outcome) setHeaderMap(h http.Header, contentType string) {
	if o.nh == 0 {
		if contentType != "" {
			h["Content-Type"] = []string{contentType}
		}
		return
	}
	var vals *[outcomeVals]string
	var fixed *[3]string
	if o.becomesContext() {
		vals, fixed = &o.vals, new([3]string)
	} else {
		hv := new(headerValues)
		if o.spilled {
			hv.vals = o.vals
		} else {
			copy(hv.buf[:o.n], o.buf[:o.n])
			for j := range o.nv {
				// hv.buf is written once, here, and never again.
				hv.vals[j] = unsafe.String(&hv.buf[o.start[j]], len(o.vals[j]))
			}
		}
		vals, fixed = &hv.vals, &hv.fixed
	}
	for i := range o.nh {
		switch k := headerName(o.hdrs[i] & 0xf); k {
		case hXLimit:
			fixed[0] = o.t.perLimit[o.decision.Index].limitVals[0]
			h[HeaderXRateLimitLimit] = fixed[0:1:1]
		case hPolicy:
			fixed[1] = o.t.policyVals[0]
			h[HeaderRateLimitPolicy] = fixed[1:2:2]
		default:
			j := o.hdrs[i] >> 4
			h[headerNames[k]] = vals[j : j+1 : j+1]
		}
	}
	if contentType != "" {
		fixed[2] = contentType
		h["Content-Type"] = fixed[2:3:3]
	}
}

// headerValues are the values setHeaderMap hands to a Header map, which keeps
// them after the outcome is reused: the per-request ones, and the limit, the
// policy and the Content-Type, the same for every response but in slices of
// their own.
type headerValues struct {
	vals  [outcomeVals]string
	fixed [3]string
	buf   [outcomeBufLen]byte
}

func (o *outcome) addHeader(k headerName, slot uint8) {
	o.hdrs[o.nh] = uint8(k) | slot<<4
	o.nh++
}

// addValue adds a value that starts at start in buf (unless spilled) and
// returns its slot.
func (o *outcome) addValue(v string, start uint8) uint8 {
	o.vals[o.nv], o.start[o.nv] = v, start
	o.nv++
	return o.nv - 1
}

// appendInt formats v into the outcome's buffer, adds it as a value and
// returns its slot. The buffer has room for any two values.
func (o *outcome) appendInt(v int64) uint8 {
	start := o.n
	o.n = uint8(len(appendDecimal(o.buf[:o.n], v)))
	// buf[start:n] is written once, here, before its string is made, and never
	// again: the outcome is read-only once decide returns.
	return o.addValue(unsafe.String(&o.buf[start], int(o.n-start)), start)
}

// outcomeContext is the context asContext returns: the parent, plus the decision.
type outcomeContext struct{ o *outcome }

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
func DecisionFromContext(ctx context.Context) (core.Decision, bool) {
	if o, ok := ctx.Value(decisionKey{}).(*outcome); ok && o.decided {
		return o.decision, true
	}
	return core.Decision{}, false
}
