package httplimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Policy applies a limiter to HTTP requests, as the package doc describes.
// Build one with New; adapters call Handle.
type Policy struct {
	lim        *core.Limiter
	key        keyfuncs.Func
	fallback   keyfuncs.Func
	keyResp    func(keyfuncs.Request, error) Response
	responder  func(keyfuncs.Request, core.Decision) Response
	onError    func(keyfuncs.Request, error)
	skip       func(keyfuncs.Request) bool
	cost       func(keyfuncs.Request) int64
	failClosed bool
	timeout    time.Duration
	maxDelay   time.Duration
	headers    HeaderSet
	onAllowed  bool
	inContext  bool
	pool       sync.Pool // of *outcome, see release

	// Precomputed once: nothing below changes between requests.
	perLimit   []limitHeaders
	policyVals []string // RateLimit-Policy
	// Shared read-only outcomes for answers that carry no per-request data,
	// indexed [JSON][HEAD].
	passOutcome  *outcome
	keyOutcomes  [2][2]*outcome
	failOutcomes [2][2]*outcome
}

// limitHeaders is what never changes for one of the limiter's limits.
type limitHeaders struct {
	limitVals []string // X-RateLimit-Limit
	rlPrefix  string   // `"name";r=`
	denied    [2][2]*Response
}

// DefaultStoreTimeout bounds one store call when no WithStoreTimeout is given.
// An in-region Redis answers in about a millisecond; a store still silent after
// 100 ms is failing, and the request should not wait for it (it fails open or
// closed instead). Stores that decide in process (they report
// Local() == true, as the memory store does) get no deadline.
const DefaultStoreTimeout = 100 * time.Millisecond

// localStore is implemented by stores that decide in process, without I/O (the
// memory store). The policy gives their calls no deadline: it could never
// fire, and setting one costs allocations on every request.
type localStore interface {
	Local() bool
}

// Response is an answer written instead of calling the next handler. The
// policy shares its own between requests: never modify one.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the Content-Type of Body; empty writes none.
	ContentType string
	// Body is written as is (never to a HEAD request). It must not be modified
	// after it is returned.
	Body []byte
}

// New returns the policy applying lim to HTTP requests. The key is the client
// IP (the peer address, no proxy trusted; see keyfuncs.IP) unless WithKey
// says otherwise. It returns an error wrapping core.ErrInvalidOption for a nil
// limiter, a nil or invalid option, or a limit name that cannot be written in
// a header.
func New(lim *core.Limiter, opts ...Option) (*Policy, error) {
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", core.ErrInvalidOption)
	}
	p := &Policy{lim: lim, key: defaultKey, timeout: DefaultStoreTimeout, headers: AllHeaders, onAllowed: true}
	for _, o := range opts {
		if o == nil {
			return nil, nilOption("option")
		}
		if err := o(p); err != nil {
			return nil, err
		}
	}
	if ls, ok := lim.Store().(localStore); ok && ls.Local() {
		p.timeout = 0
	}
	if err := p.precompute(); err != nil {
		return nil, err
	}
	return p, nil
}

// Limiter returns the policy's limiter.
func (p *Policy) Limiter() *core.Limiter { return p.lim }

// decide runs the policy on one request and says what to do with it. ctx is
// the request's context (its end aborts the store call); arrival, when set,
// is the instant the server read the request (see Arrival). The outcome is
// read-only, and r is not kept after decide returns.
func (p *Policy) decide(ctx context.Context, r keyfuncs.Request, arrival time.Time) *outcome {
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
	var d core.Decision
	if p.timeout > 0 {
		cctx, cancel := context.WithTimeout(ctx, p.timeout)
		d, err = p.lim.AllowNAt(cctx, key, cost, arrival)
		cancel()
	} else {
		d, err = p.lim.AllowNAt(ctx, key, cost, arrival)
	}
	if err != nil {
		return p.limiterError(r, err)
	}
	if d.Allowed && p.maxDelay > 0 && d.Delay > p.maxDelay {
		d.Allowed, d.RetryAfter, d.Delay = false, d.Delay, 0
	}
	o, _ := p.pool.Get().(*outcome)
	if o == nil {
		o = &outcome{pooled: true, p: p}
	} else {
		// What release left is stale: reset all but vals and buf, which are
		// written before they are read (nv and n say how much is used).
		o.nh, o.nv, o.n, o.spilled, o.response, o.parent = 0, 0, 0, false, nil, nil
	}
	o.action, o.decided, o.decision = actionPass, true, d
	if d.Allowed {
		if p.onAllowed {
			p.setHeaders(o, &d)
		}
		return o
	}
	p.setHeaders(o, &d)
	o.action = actionRespond
	head := r.Method() == "HEAD"
	switch {
	case p.responder != nil:
		o.response = response(p.responder(r, d), 429, head)
	case acceptsJSON(r.Header("Accept")):
		o.response = p.perLimit[d.Index].denied[1][b2i(head)]
	default:
		o.response = p.perLimit[d.Index].denied[0][b2i(head)]
	}
	return o
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *Policy) keyError(r keyfuncs.Request, err error) *outcome {
	head := r.Method() == "HEAD"
	if p.keyResp == nil {
		return p.keyOutcomes[b2i(acceptsJSON(r.Header("Accept")))][b2i(head)]
	}
	if !errors.Is(err, keyfuncs.ErrKey) {
		err = fmt.Errorf("%w: %w", keyfuncs.ErrKey, err)
	}
	return &outcome{action: actionRespond, response: response(p.keyResp(r, err), 401, head)}
}

func (p *Policy) limiterError(r keyfuncs.Request, err error) *outcome {
	if p.onError != nil {
		p.onError(r, err)
	}
	if !p.failClosed {
		return p.passOutcome
	}
	return p.failOutcomes[b2i(acceptsJSON(r.Header("Accept")))][b2i(r.Method() == "HEAD")]
}

// response completes a responder's answer: a default status, no body to HEAD.
func response(resp Response, status int, head bool) *Response {
	if resp.Status == 0 {
		resp.Status = status
	}
	if head {
		resp.Body = nil
	}
	return &resp
}
