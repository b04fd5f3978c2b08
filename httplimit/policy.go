package httplimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	denied     func(ResponseWriter, keyfuncs.Request, core.Decision)
	observer   Observer // nil: no event is built, no latency measured
	skip       func(keyfuncs.Request) bool
	cost       func(keyfuncs.Request) int64
	pick       keyfuncs.Func // WithTiers: names the request's tier
	settle     *settler      // WithSettle, WithSettleHeader, WithRefund
	failClosed bool
	dryRun     bool
	timeout    time.Duration
	maxDelay   time.Duration
	headers    HeaderSet
	bodies     BodyFormat // WithBodyFormat
	onAllowed  bool
	inContext  bool
	pool       sync.Pool // of *outcome, see release
	logs       policyLogs

	unavailableRetry time.Duration // the Retry-After of a 503 (WithUnavailableRetryAfter)

	// Precomputed once: nothing below changes between requests.
	def      tier             // the policy's own limiter
	tiers    []*tier          // WithTiers', in order
	tierMap  map[string]*tier // tiers by name, when there are many
	tierLims []*core.Limiter  // WithTiers' limiters, until New builds tiers

	// WithOverrides: the specs until New builds them, then per key.
	overrideSpecs map[string]Override
	overrides     map[string]override
	overrideTiers []*tier // one per distinct override limiter
	// Shared read-only outcomes for answers that carry no per-request data,
	// indexed [JSON][HEAD].
	passOutcome  *outcome
	keyOutcomes  [2][2]*outcome
	peerOutcomes [2][2]*outcome
	failOutcomes [2][2]*outcome

	// WithInFlightWait's queue (inflight_wait.go); nil refuses at once.
	inflightWait    *inflightWait
	inflightWaiting atomic.Int64 // requests waiting for a slot now
}

// DefaultStoreTimeout bounds one store call when no WithStoreTimeout is given.
// An in-region Redis answers in about a millisecond; a store still silent after
// 100 ms is failing, and the request should not wait for it (it fails open or
// closed instead). Stores that decide in process (they report
// Local() == true, as the memory store does) get no deadline.
const DefaultStoreTimeout = 100 * time.Millisecond

// DefaultUnavailableRetryAfter is the Retry-After of a 503 when no
// WithUnavailableRetryAfter is given: a client that honours it waits a second
// before it tries again, long enough for a store's failover to be under way,
// short enough that an honest client is not kept away for long.
const DefaultUnavailableRetryAfter = time.Second

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
	p := &Policy{
		lim: lim, key: defaultKey, timeout: DefaultStoreTimeout, headers: AllHeaders, onAllowed: true,
		unavailableRetry: DefaultUnavailableRetryAfter,
	}
	p.logs.every = LogInterval
	for _, o := range opts {
		if o == nil {
			return nil, nilOption("option")
		}
		if err := o(p); err != nil {
			return nil, err
		}
	}
	if err := p.buildTiers(); err != nil {
		return nil, err
	}
	if err := p.buildOverrides(); err != nil {
		return nil, err
	}
	p.precomputeFixed()
	return p, nil
}

// Limiter returns the policy's limiter.
func (p *Policy) Limiter() *core.Limiter { return p.lim }

// decide runs the policy on one request and says what to do with it. ctx is
// the request's context (its end aborts the store call); arrival, when set,
// is the instant the server read the request (see Arrival). The outcome is
// read-only, and r is not kept after decide returns. The spend is what an
// admitted request spent, for a refund after its handler (WithRefund).
func (p *Policy) decide(ctx context.Context, r keyfuncs.Request, arrival time.Time) (*outcome, spend) {
	if p.skip != nil && p.skip(r) {
		if p.observer != nil {
			p.observe(Event{Outcome: OutcomeSkipped, Policy: p.def.name, Request: r})
		}
		return p.passOutcome, spend{}
	}
	key, t, answered := p.keyAndTier(r)
	if answered != nil {
		return answered, spend{}
	}
	cost := int64(1)
	if p.cost != nil {
		cost = p.cost(r)
	}
	var began time.Time
	if t.timed {
		began = time.Now()
	}
	var err error
	// The limiter writes its decision straight into the outcome: a decision
	// is 144 bytes, and each copy of it shows in a denial's cost.
	o := p.pooledOutcome(t)
	if t.timeout <= 0 {
		o.decision, err = t.lim.AllowNAt(ctx, key, cost, arrival)
	} else {
		o.decision, err = t.allowWithin(ctx, key, cost, arrival)
	}
	var latency time.Duration
	if t.timed {
		latency = time.Since(began)
	}
	if err != nil {
		wait := o.decision.RetryAfter
		p.release(o)
		return p.limiterError(r, t, err, latency, wait), spend{}
	}
	o.decided = true
	if t.breaker.open() {
		p.noteBreakerClosed(t)
	}
	if d := &o.decision; d.Allowed && (p.maxDelay == 0 || d.Delay <= p.maxDelay) {
		if t.inflight != nil {
			return p.admitInFlight(ctx, o, r, t, key, cost, latency)
		}
		return p.admit(o, r, cost, latency), spend{key: key, cost: cost}
	}
	return p.deny(o, r, latency), spend{}
}

// keyAndTier finds r's key and the tier that decides it (an override's,
// the picked one, or the policy's own), or the outcome that answers r
// without a decision: a key error, or a blocked or unlimited override.
func (p *Policy) keyAndTier(r keyfuncs.Request) (key string, t *tier, answered *outcome) {
	key, err := p.key(r)
	if err != nil && p.fallback != nil {
		key, err = p.fallback(r)
	}
	if err != nil {
		return "", nil, p.keyError(r, err)
	}
	t = &p.def
	if p.overrides != nil {
		if ov, ok := p.overrides[key]; ok {
			if ov.t == nil || ov.blocked {
				return "", nil, p.overridden(r, ov)
			}
			t = ov.t
		}
	}
	if p.pick != nil && t == &p.def {
		t = p.tierFor(r)
	}
	return key, t, nil
}

// spend is what an admitted request spent: its key and cost.
type spend struct {
	key  string
	cost int64
	// slot is the in-flight slot the request took (core.WithInFlight), and
	// slotWait the store timeout its release gets.
	slot     core.Slot
	slotWait time.Duration
}

// allowWithin asks t's limiter within t's store timeout (decide calls the
// limiter directly when there is none: a store that decides in process).
func (t *tier) allowWithin(ctx context.Context, key string, cost int64, arrival time.Time) (core.Decision, error) {
	cctx, cancel := core.WithStoreTimeout(ctx, t.timeout)
	d, err := t.lim.AllowNAt(cctx, key, cost, arrival)
	cancel()
	return d, err
}

// newOutcome returns a pooled outcome for decision d under t.
func (p *Policy) newOutcome(t *tier, d *core.Decision) *outcome {
	o := p.pooledOutcome(t)
	o.decided, o.decision = true, *d
	return o
}

// pooledOutcome returns a pooled outcome under t whose decision is still to
// be written: not decided, its decision stale.
func (p *Policy) pooledOutcome(t *tier) *outcome {
	o, _ := p.pool.Get().(*outcome)
	if o == nil {
		o = &outcome{pooled: true}
	} else {
		// What release left is stale: reset all but decision, vals and buf,
		// which are written before they are read (nv and n say how much of
		// vals and buf is used).
		o.nh, o.nv, o.n, o.spilled, o.response, o.parent, o.refund, o.settled = 0, 0, 0, false, nil, nil, false, false
		o.decided = false
	}
	o.action, o.t = actionPass, t
	return o
}

// admit completes the outcome of an admitted request.
func (p *Policy) admit(o *outcome, r keyfuncs.Request, cost int64, latency time.Duration) *outcome {
	if p.onAllowed {
		p.setHeaders(o, &o.decision, true)
	}
	o.refund = p.settle != nil && (cost > 0 || p.settle.charges())
	if p.observer != nil {
		p.observe(Event{Outcome: OutcomeAllowed, Policy: o.t.name, Decision: o.decision, StoreLatency: latency, Request: r})
	}
	if p.dryRun {
		o.decision.Delay = 0 // not held
	}
	return o
}

// deny completes the outcome of a denied request: a leaky-bucket request to
// be held longer than WithMaxDelay is denied too (its place is spent). In a
// dry run it passes, with the truthful headers but no Retry-After.
func (p *Policy) deny(o *outcome, r keyfuncs.Request, latency time.Duration) *outcome {
	d := &o.decision
	if d.Allowed {
		d.Allowed, d.RetryAfter, d.Delay = false, d.Delay, 0
	}
	if p.dryRun {
		p.setHeaders(o, d, false)
		if p.observer != nil {
			p.observe(Event{Outcome: OutcomeDryRunDenied, Policy: o.t.name, Decision: *d, StoreLatency: latency, Request: r})
		}
		return o
	}
	p.setHeaders(o, d, true)
	if p.observer != nil {
		p.observe(Event{Outcome: deniedOutcome(d), Policy: o.t.name, Decision: *d, StoreLatency: latency, Request: r})
	}
	o.action = actionRespond
	head := r.Method() == "HEAD"
	switch {
	case p.denied != nil:
		// Handle calls the denied handler once the headers are set.
	case p.responder != nil:
		o.response = response(p.responder(r, *d), 429, head)
	default:
		o.response = o.t.perLimit[d.Index].denied[b2i(p.answersJSON(r))][b2i(head)]
	}
	return o
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyError answers a request whose key could not be found: 401, or 500 for
// a peer that is not an IP (a configuration error, logged), or passes it in
// a dry run.
func (p *Policy) keyError(r keyfuncs.Request, err error) *outcome {
	if (p.observer != nil || p.keyResp != nil) && !errors.Is(err, keyfuncs.ErrKey) {
		err = fmt.Errorf("%w: %w", keyfuncs.ErrKey, err)
	}
	peer := errors.Is(err, keyfuncs.ErrPeerNotIP)
	if peer {
		p.logs.log(&p.logs.peerNotIP, "ratewarden: the peer address is not an IP: name the listener's peers a trusted proxy, or key requests otherwise", p.def.name, err)
	}
	if p.observer != nil {
		p.observe(Event{Outcome: OutcomeKeyError, Policy: p.def.name, Err: err, Request: r})
	}
	if p.dryRun {
		return p.passOutcome
	}
	head := r.Method() == "HEAD"
	if p.keyResp != nil {
		return &outcome{action: actionRespond, response: response(p.keyResp(r, err), KeyErrorProblem(err).Status, head)}
	}
	if peer {
		return p.peerOutcomes[b2i(p.answersJSON(r))][b2i(head)]
	}
	return p.keyOutcomes[b2i(p.answersJSON(r))][b2i(head)]
}

// limiterError reports a limiter error and fails open or closed (a dry run
// always fails open); a full store's refusal is answered by storeFull, and
// the open breaker's by breakerOpen (wait is the time to its next probe).
func (p *Policy) limiterError(r keyfuncs.Request, t *tier, err error, latency, wait time.Duration) *outcome {
	if errors.Is(err, core.ErrStoreFull) {
		return p.storeFull(r, t, err, latency)
	}
	if isBreakerOpen(err) {
		return p.breakerOpen(r, t, wait, err)
	}
	closed := p.failClosed && !p.dryRun
	if p.observer != nil {
		oc := OutcomeFailedOpen
		if closed {
			oc = OutcomeFailedClosed
		}
		p.observe(Event{Outcome: oc, Policy: t.name, StoreLatency: latency, Err: err, Request: r})
	}
	msg := "ratewarden: rate limiter failed; requests pass unlimited (fail open)"
	if closed {
		msg = "ratewarden: rate limiter failed; requests get 503 (fail closed)"
	}
	p.logs.logStore(&p.logs.storeErr, msg, t.name, err)
	p.noteBreakerOpened(t, err)
	if !closed {
		return p.passOutcome
	}
	return p.failOutcomes[b2i(p.answersJSON(r))][b2i(r.Method() == "HEAD")]
}

// storeFull reports a request whose new key a full store refused and answers
// it 503 with Retry-After, whatever the fail mode: the refusal is the
// operator's choice of what a full store does (nginx's full zone), not an
// outage, and failing it open would let a flood of new keys (the very thing
// that fills a store) pass unlimited. A dry run lets it pass, as it lets
// everything pass.
func (p *Policy) storeFull(r keyfuncs.Request, t *tier, err error, latency time.Duration) *outcome {
	if p.observer != nil {
		p.observe(Event{Outcome: OutcomeStoreFull, Policy: t.name, StoreLatency: latency, Err: err, Request: r})
	}
	p.logs.logStore(&p.logs.storeFull, "ratewarden: the store is full and refuses new keys; their requests get 503", t.name, err)
	if p.dryRun {
		return p.passOutcome
	}
	return p.failOutcomes[b2i(p.answersJSON(r))][b2i(r.Method() == "HEAD")]
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
