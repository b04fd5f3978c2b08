package httplimit

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// WithSettle reserves each admitted request's cost (1, or WithCost's: a
// fixed or computed estimate) and settles it at its real cost once the
// handler has answered: actual gets the response status and a function that
// reads a response header the handler set, and returns the real cost, or
// ok false to keep the reservation as it is (the response tells nothing).
// An LLM endpoint that counts the tokens it generated, or an export the
// bytes it sent, names them this way.
//
// The settle is one atomic store call on the tier that admitted the request
// (core.Limiter.Settle): a real cost below the reservation gives the
// difference back, never raising the key above a fresh key's quota; one
// above it charges the difference, whether the quota holds it or not, up to
// the limiter's debt bound (core.WithDebt; 0 by default: up to an empty
// quota), and a key in debt is denied, with a Retry-After that counts the
// debt, until it is paid back. It is reported to the observer as
// OutcomeSettled, with the decision after it and Event.Settled, the
// difference. A negative cost from actual keeps the reservation and is
// reported as a failed settle (Event.Err wraps core.ErrInvalidCost).
//
// The settle happens when Pass.Settle is called, as WithRefund's refund does
// (see there): before the response's headers are sent, so that
// X-RateLimit-Remaining, X-RateLimit-Reset and RateLimit tell the state
// after it; header reads the headers the handler set by then. The refund of
// WithRefund is a settle at 0 for the statuses it names; WithSettle,
// WithSettleHeader and WithRefund set the one settle of a policy, the later
// replacing the earlier. It returns an error wrapping core.ErrInvalidOption
// for a nil actual, or under the sliding log, which cannot charge a cost
// after admission.
func WithSettle(actual func(status int, header func(name string) string) (cost int64, ok bool)) Option {
	return func(p *Policy) error {
		if actual == nil {
			return nilOption("settle function")
		}
		if err := settlesUnder(p.lim); err != nil {
			return err
		}
		p.settle = &settler{actual: actual}
		return nil
	}
}

// WithSettleHeader is WithSettle reading the real cost from the response
// header name (X-Cost, say): a decimal integer from 0 to MaxInt64, digits
// only. A response without the header keeps its reservation; one whose
// value is not such an integer ("NaN", "1e999", "0x10", "-1", "+1", " 1",
// 20 digits) keeps it too, and the settle is reported as failed (Event.Err
// wraps core.ErrInvalidCost, logged when there is no observer). name must be
// a valid header name, and the limiter's algorithm not the sliding log, else
// it returns an error wrapping core.ErrInvalidOption.
func WithSettleHeader(name string) Option {
	return func(p *Policy) error {
		if len(name) > 256 || !keyfuncs.ValidHeaderName(name) {
			return fmt.Errorf("%w: settle header %q is not a header name", core.ErrInvalidOption, name)
		}
		if err := settlesUnder(p.lim); err != nil {
			return err
		}
		p.settle = &settler{header: http.CanonicalHeaderKey(name)}
		return nil
	}
}

// settlesUnder returns an error wrapping core.ErrInvalidOption when lim's
// algorithm cannot charge a cost after admission: the sliding log, which
// records each admitted unit's instant (a settle below the reservation, a
// refund, it takes: WithRefund is allowed).
func settlesUnder(lim *core.Limiter) error {
	if lim != nil && lim.Algorithm() == core.SlidingLog {
		return fmt.Errorf("%w: sliding-log cannot charge a cost after the response (it records each admitted unit's instant); use sliding-window, token-bucket or gcra", core.ErrInvalidOption)
	}
	return nil
}

// ParseCost reads a cost as WithSettleHeader does: a decimal integer from 0
// to MaxInt64, digits only. Anything else (empty, a sign, a space, "NaN",
// "1e999", "0x10", a value above MaxInt64) returns an error wrapping
// core.ErrInvalidCost.
func ParseCost(s string) (int64, error) {
	if s == "" || len(s) > 19 {
		return 0, fmt.Errorf("%w: cost %q is not a decimal integer from 0 to %d", core.ErrInvalidCost, clip(s), int64(1<<63-1))
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: cost %q is not a decimal integer from 0 to %d", core.ErrInvalidCost, clip(s), int64(1<<63-1))
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<63-1 {
		return 0, fmt.Errorf("%w: cost %q is above %d", core.ErrInvalidCost, clip(s), int64(1<<63-1))
	}
	return int64(n), nil
}

// clip shortens what the client sent for an error message.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// ResponseHeaderReader is implemented by a ResponseWriter whose response
// headers are not a net/http Header map (fasthttp's response, gRPC's header
// and trailer metadata): ResponseHeader returns the value the handler set for
// name, "" when none. The policy reads the header WithSettleHeader names
// (and a WithSettle function's header reads) through it, or through the
// writer's Header map, when Pass.Settle is called.
type ResponseHeaderReader interface {
	ResponseHeader(name string) string
}

// responseHeader reads name from w's response headers.
func responseHeader(w ResponseWriter, name string) string {
	switch w := w.(type) {
	case ResponseHeaderReader:
		return w.ResponseHeader(name)
	case headerMap:
		return w.Header().Get(name)
	}
	return ""
}

// settler is a policy's settle: WithRefund's predicate, WithSettleHeader's
// header, or WithSettle's function (one of the three).
type settler struct {
	refund func(status int) bool
	header string
	actual func(status int, header func(name string) string) (int64, bool)
}

// charges reports whether the settle may charge: a request of cost 0 is
// held for its settle then too.
func (s *settler) charges() bool { return s.refund == nil }

// cost is the real cost of a request whose response has status, with w the
// writer holding its headers (nil when they are gone): ok is false when the
// reservation stays, err set when it stays because the cost was bad.
func (s *settler) cost(status int, w ResponseWriter) (n int64, ok bool, err error) {
	switch {
	case s.refund != nil:
		return 0, s.refund(status), nil
	case w == nil:
		return 0, false, nil
	case s.header != "":
		v := responseHeader(w, s.header)
		if v == "" {
			return 0, false, nil
		}
		n, err = ParseCost(v)
		return n, err == nil, err
	}
	n, ok = s.actual(status, func(name string) string { return responseHeader(w, name) })
	if ok && n < 0 {
		return 0, false, fmt.Errorf("%w: settle at %d", core.ErrInvalidCost, n)
	}
	return n, ok, nil
}

// settleOne settles a single policy's request once, and rewrites w's
// headers after it.
func (s Pass) settleOne(status int, w ResponseWriter) {
	o := s.o
	if o.settled {
		return
	}
	o.settled = true
	p := o.t.p
	d, ok := p.settleNow(s.ctx, o, s.spend, status, w)
	if !ok || o.nh == 0 || w == nil {
		return
	}
	after := p.refundedOutcome(o.t, &d)
	writeHeaders(after, w, "")
	p.release(after)
}

// settleNow settles o's request, which spent sp, for a response of status
// whose headers w holds, and reports it. It returns the decision after the
// settle, and false when there was nothing to settle or it failed.
func (p *Policy) settleNow(ctx context.Context, o *outcome, sp spend, status int, w ResponseWriter) (core.Decision, bool) {
	actual, ok, err := p.settle.cost(status, w)
	if err != nil {
		p.reportSettle(o.t, core.Decision{}, 0, 0, err)
		return core.Decision{}, false
	}
	if !ok || actual == sp.cost {
		return core.Decision{}, false
	}
	t := o.t
	d, latency, err := p.afterResponse(ctx, t, func(ctx context.Context) (core.Decision, error) {
		return t.lim.Settle(ctx, sp.key, actual, &o.decision)
	})
	p.reportSettle(t, d, actual-sp.cost, latency, err)
	return d, err == nil
}

// afterResponse makes call, a store call for a request whose response is
// decided (a settle, a refund), on a context that outlives the client and
// under t's store timeout, and returns its decision, its latency (when p has
// an observer to tell it) and its error.
func (p *Policy) afterResponse(ctx context.Context, t *tier, call func(context.Context) (core.Decision, error)) (core.Decision, time.Duration, error) {
	ctx = context.WithoutCancel(ctx)
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = core.WithStoreTimeout(ctx, t.timeout)
		defer cancel()
	}
	var began time.Time
	if p.observer != nil {
		began = time.Now()
	}
	d, err := call(ctx)
	var latency time.Duration
	if p.observer != nil {
		latency = time.Since(began)
	}
	return d, latency, err
}

// reportSettle tells the observer (or the log) how a settle on t ended.
func (p *Policy) reportSettle(t *tier, d core.Decision, diff int64, latency time.Duration, err error) {
	if p.observer != nil {
		e := Event{Outcome: OutcomeSettled, Policy: t.name, Decision: d, StoreLatency: latency, Err: err, Settled: diff}
		if p.settle.refund != nil {
			e.Outcome, e.Settled = OutcomeRefunded, 0
		}
		if err != nil {
			e.Decision, e.Settled = core.Decision{}, 0
		}
		p.observe(e)
	}
	if err != nil {
		if p.settle.refund != nil {
			p.logs.logStore(&p.logs.refundErr, "ratewarden: refund failed; the request's cost stays spent", t.name, err)
		} else {
			p.logs.logStore(&p.logs.refundErr, "ratewarden: settle failed; the request's reservation stays spent", t.name, err)
		}
	}
}

// refundedOutcome returns an outcome whose headers tell d, a decision after
// a settle on t, for a response that was admitted: its figures, no
// Retry-After.
func (p *Policy) refundedOutcome(t *tier, d *core.Decision) *outcome {
	o := p.newOutcome(t, d)
	o.decision.Allowed = true // the response was admitted: a settle never denies it
	p.setHeaders(o, &o.decision, false)
	return o
}

// groupRefund is what a Group's Pass holds under a settle: every member
// that let the request through (the settling ones settle their cost; the
// others still describe their state in the group's headers), and whether
// the settles are done.
type groupRefund struct {
	ms      []member
	settled bool
}

// settle settles, member by member, what a Group's request spent under each
// policy that settles, once, and rewrites the group's headers on w when one
// did.
func (g *groupRefund) settle(ctx context.Context, status int, w ResponseWriter) {
	if g.settled {
		return
	}
	g.settled = true
	changed := false
	for i := range g.ms {
		m := &g.ms[i]
		if !m.o.refund || m.p.settle == nil {
			continue
		}
		d, ok := m.p.settleNow(ctx, m.o, m.sp, status, w)
		if ok && m.o.nh > 0 && w != nil {
			m.after = m.p.refundedOutcome(m.o.t, &d)
			changed = true
		}
	}
	if changed {
		rewriteGroupHeaders(g.ms, w)
	}
	for i := range g.ms {
		if m := &g.ms[i]; m.after != nil {
			m.p.release(m.after)
			m.after = nil
		}
	}
}

// rewriteGroupHeaders sets a Group's headers on w anew, after settles.
func rewriteGroupHeaders(ms []member, w ResponseWriter) {
	if hm, ok := w.(headerMap); ok {
		// The policy that governs X-RateLimit-* may change with the settles,
		// and the members may write different header families.
		h := hm.Header()
		for _, name := range headerNames[hXLimit:] {
			delete(h, name)
		}
	}
	writeGroupHeaders(ms, w)
}

// release hands every member's outcome back.
func (g *groupRefund) release() {
	for _, m := range g.ms {
		m.p.release(m.o)
	}
}
