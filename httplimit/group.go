package httplimit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Group applies several policies to every request. Each policy keeps its
// own counters, key, tiers and behaviour; the request goes on only when every
// policy that decides it admits it, as HandleAll describes. A Group is
// HandleAll over a fixed list; package rules picks the policies of each
// request from a rules document and calls HandleAll with them. A Group is
// safe for concurrent use.
type Group struct {
	policies []*Policy
}

// maxStackPolicies is the number of applying policies HandleAll keeps on the
// stack; more cost an allocation.
const maxStackPolicies = 16

// NewGroup returns the Group of policies, which decide in the order given.
// It returns an error wrapping core.ErrInvalidOption for no policy or a nil
// one.
func NewGroup(policies ...*Policy) (*Group, error) {
	if len(policies) == 0 {
		return nil, fmt.Errorf("%w: a group of no policy", core.ErrInvalidOption)
	}
	for i, p := range policies {
		if p == nil {
			return nil, fmt.Errorf("%w: policy %d is nil", core.ErrInvalidOption, i)
		}
	}
	return &Group{policies: append([]*Policy(nil), policies...)}, nil
}

// Policies returns the group's policies, in the order they decide.
func (g *Group) Policies() []*Policy { return append([]*Policy(nil), g.policies...) }

// Handle runs every policy of the group on r, as HandleAll does, and returns
// what Policy.Handle returns.
func (g *Group) Handle(ctx context.Context, r keyfuncs.Request, w ResponseWriter) (Pass, bool) {
	return HandleAll(ctx, r, w, g.policies)
}

// member is one policy's part in a group decision.
type member struct {
	p     *Policy
	o     *outcome
	sp    spend
	after *outcome // the headers after a refund (Pass.Settle), while they are written
}

// current is the outcome whose headers tell m's state: after a refund, the
// refund's.
func (m *member) current() *outcome {
	if m.after != nil {
		return m.after
	}
	return m.o
}

// handleMany decides r under several policies, in order, until one answers.
func handleMany(ctx context.Context, r keyfuncs.Request, w ResponseWriter, policies []*Policy) (Pass, bool) {
	var arrival time.Time
	if a, ok := r.(Arrival); ok {
		arrival = a.ArrivedAt()
	}
	var stack [maxStackPolicies]member
	ms := stack[:0]
	for n, p := range policies {
		o, sp := p.decide(ctx, r, arrival)
		if o.action == actionRespond {
			answer := o
			if o.decided {
				answer = withLists(o, policyField(r, ms, o, policies[n+1:]), "")
			}
			rollback(ctx, ms)
			p.respond(answer, r, w)
			if answer != o {
				p.release(o)
			}
			return Pass{ctx: ctx}, false
		}
		ms = append(ms, member{p: p, o: o, sp: sp})
	}
	return passGroup(ctx, r, w, ms)
}

// rollback gives back what the admitted members spent, since a later policy
// answered the request, and releases their outcomes.
func rollback(ctx context.Context, ms []member) {
	for _, m := range ms {
		if m.o.decided && m.o.decision.Allowed && m.sp.cost > 0 {
			_, _ = m.p.refundNow(ctx, m.o, m.sp) // a failure is reported there
		}
		m.p.release(m.o)
		releaseSlot(ctx, m.sp.slot, m.sp.slotWait)
	}
}

// policyField is a denial's RateLimit-Policy: the limits of the members that
// decided, of the denying outcome's tier, and of the tiers the policies after
// it would have used.
func policyField(r keyfuncs.Request, ms []member, denied *outcome, later []*Policy) string {
	var b strings.Builder
	for _, m := range ms {
		if m.o.decided {
			appendItem(&b, m.o.t.policyVals[0])
		}
	}
	appendItem(&b, denied.t.policyVals[0])
	for _, p := range later {
		t := &p.def
		if p.pick != nil {
			t = p.tierFor(r)
		}
		appendItem(&b, t.policyVals[0])
	}
	return b.String()
}

// appendItem appends a structured-field list item (or items) to b.
func appendItem(b *strings.Builder, item string) {
	if b.Len() > 0 {
		b.WriteString(", ")
	}
	b.WriteString(item)
}

// passGroup completes a request every member let through: the governing member's
// headers with the group's IETF lists, the longest hold, and a Pass that
// refunds each member's cost under its own WithRefund.
func passGroup(ctx context.Context, r keyfuncs.Request, w ResponseWriter, ms []member) (Pass, bool) {
	gov := writeGroupHeaders(ms, w)
	hold := -1
	for i, m := range ms {
		if m.o.decided && m.o.decision.Delay > 0 && (hold < 0 || m.o.decision.Delay > ms[hold].o.decision.Delay) {
			hold = i
		}
	}
	if hold >= 0 && !ms[hold].o.wait(holdContext(ctx, r), hangUpChecker(r)) {
		for _, m := range ms {
			m.p.release(m.o)
			releaseSlot(ctx, m.sp.slot, m.sp.slotWait)
		}
		return Pass{ctx: ctx}, false
	}
	return finishPass(ctx, ms, gov)
}

// writeGroupHeaders sets on w the headers of a request every member let
// through: the governing member's (the most restrictive), with the group's
// IETF lists. It returns the governing member's index, -1 when no member
// sets headers.
func writeGroupHeaders(ms []member, w ResponseWriter) int {
	gov := -1
	var policy, rateLimit strings.Builder
	for i := range ms {
		o := ms[i].current()
		if !o.decided || o.nh == 0 {
			continue
		}
		appendItem(&policy, o.t.policyVals[0])
		appendItem(&rateLimit, o.rateLimitField())
		if gov < 0 || governs(&o.decision, &ms[gov].current().decision) {
			gov = i
		}
	}
	if gov >= 0 {
		writeHeaders(withLists(ms[gov].current(), policy.String(), rateLimit.String()), w, "")
	}
	return gov
}

// finishPass builds the Pass of a request every member let through, and
// releases the outcomes nothing holds on to. When a member refunds, the Pass
// holds every member until Finish: the refunding ones to give their cost
// back, the others to tell their state in the headers a refund rewrites.
func finishPass(ctx context.Context, ms []member, gov int) (Pass, bool) {
	pass := Pass{ctx: ctx, held: groupSlots(ms)}
	refunds := false
	for i, m := range ms {
		if i == gov && m.o.becomesContext() {
			pass.ctx = m.o.asContext(ctx)
		}
		refunds = refunds || m.o.refund
	}
	if refunds {
		pass.group = &groupRefund{ms: append([]member(nil), ms...)} // released by Finish
		return pass, true
	}
	for _, m := range ms {
		m.p.release(m.o) // a no-op for the outcome that became the context
	}
	return pass, true
}

// governs reports whether a describes a more restrictive state than b: a
// denial (a dry run's), else less remaining, else a later reset.
func governs(a, b *core.Decision) bool {
	if a.Allowed != b.Allowed {
		return !a.Allowed
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	return a.ResetAfter > b.ResetAfter
}

// withLists returns a copy of o, made for one response, whose
// RateLimit-Policy is policy and, unless rateLimit is empty, whose RateLimit
// is rateLimit: a Group's lists. Its values are copies, so o may be released
// once the copy's headers are written; the single-policy path never pays
// for this.
func withLists(o *outcome, policy, rateLimit string) *outcome {
	c := new(outcome)
	*c = *o
	c.pooled = false
	t := *o.t
	t.policyVals = []string{policy}
	c.t = &t
	for j := range c.nv {
		c.vals[j] = strings.Clone(c.vals[j])
	}
	c.spilled = true // the values lie off buf: a Header map takes them as they are
	if rateLimit != "" {
		for i := range c.nh {
			if headerName(c.hdrs[i]&0xf) == hRateLimit {
				c.vals[c.hdrs[i]>>4] = rateLimit
			}
		}
	}
	return c
}

// rateLimitField returns o's RateLimit field value, "" when it sets none.
func (o *outcome) rateLimitField() string {
	for i := range o.nh {
		if headerName(o.hdrs[i]&0xf) == hRateLimit {
			return o.vals[o.hdrs[i]>>4]
		}
	}
	return ""
}
