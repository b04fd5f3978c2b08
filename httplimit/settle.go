package httplimit

import (
	"context"

	"github.com/ratewarden/ratewarden/core"
)

// settleOne settles a single policy's refund once, and rewrites w's headers
// after a refund.
func (s Pass) settleOne(status int, w ResponseWriter) {
	o := s.o
	if o.settled {
		return
	}
	o.settled = true
	p := o.t.p
	if !p.refund(status) {
		return
	}
	d, ok := p.refundNow(s.ctx, o, s.spend)
	if !ok || o.nh == 0 || w == nil {
		return
	}
	after := p.refundedOutcome(o.t, &d)
	writeHeaders(after, w, "")
	p.release(after)
}

// refundedOutcome returns an outcome whose headers tell d, a decision after
// a refund on t, for a response that was admitted: its figures, no
// Retry-After.
func (p *Policy) refundedOutcome(t *tier, d *core.Decision) *outcome {
	o := p.newOutcome(t, d)
	o.decision.Allowed = true // a refund's decision admits: it never denies
	p.setHeaders(o, &o.decision, false)
	return o
}

// groupRefund is what a Group's Pass holds under WithRefund: every member
// that let the request through (the refunding ones give their cost back;
// the others still describe their state in the group's headers), and
// whether the refunds are settled.
type groupRefund struct {
	ms      []member
	settled bool
}

// settle gives back, member by member, what a Group's request spent under
// each policy whose WithRefund predicate holds for status, once, and
// rewrites the group's headers on w when one did.
func (g *groupRefund) settle(ctx context.Context, status int, w ResponseWriter) {
	if g.settled {
		return
	}
	g.settled = true
	changed := false
	for i := range g.ms {
		m := &g.ms[i]
		if !m.o.refund || !m.p.refund(status) {
			continue
		}
		d, ok := m.p.refundNow(ctx, m.o, m.sp)
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

// rewriteGroupHeaders sets a Group's headers on w anew, after refunds.
func rewriteGroupHeaders(ms []member, w ResponseWriter) {
	if hm, ok := w.(headerMap); ok {
		// The policy that governs X-RateLimit-* may change with the refunds,
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
