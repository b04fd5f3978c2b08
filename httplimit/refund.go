package httplimit

import (
	"context"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// WithRefund gives a request's cost back after its handler ran when
// refund(status) holds for the response status: to count only failures, as
// a login limit should,
//
//	httplimit.WithRefund(func(status int) bool { return status < 400 })
//
// gives the cost of every successful response back, so that only failed
// attempts count. The refund is one atomic store call on the tier that
// admitted the request, with the decision that admitted it (see
// core.Limiter.Refund: it never raises the key above a fresh key's quota,
// and after the window or the bucket moved on there is nothing to give
// back). It is reported to the observer as OutcomeRefunded with the decision
// after it, or its error (logged when there is no observer). A dry run's
// admitted requests are refunded too; denied ones spent nothing.
//
// A handler that panics gets no refund: its response is not known. A
// request with a cost of 0 spends nothing and gets none.
//
// The adapters learn the status after the next handler returns (Gin's
// c.Writer.Status(), Echo's response or returned error, Fiber's response or
// returned error; net/http wraps the ResponseWriter, for WithRefund's
// policies only). The refund runs on the request's goroutine after the
// handler, under the store timeout, on a context that outlives the client.
// It returns an error wrapping core.ErrInvalidOption for a nil refund.
func WithRefund(refund func(status int) bool) Option {
	return func(p *Policy) error {
		if refund == nil {
			return nilOption("refund predicate")
		}
		p.refund = refund
		return nil
	}
}

// Pass is a request Handle let through, for the adapter to finish: the
// context its next handler sees, and, under WithRefund, what to give back
// once that handler returned. It is a small value: with no WithRefund it
// holds only the context.
type Pass struct {
	ctx   context.Context
	o     *outcome  // held for Finish under WithRefund; nil otherwise
	spend spend     // what o's request spent, when o is set
	group *[]member // a Group's members held for Finish under WithRefund
}

// Context returns the context the next handler should see.
func (s Pass) Context() context.Context { return s.ctx }

// WantsStatus reports whether Finish needs the response status: the policy
// refunds (WithRefund) and the request was admitted. An adapter calls Finish
// only then, so that the default path reads no status.
func (s Pass) WantsStatus() bool { return s.o != nil || s.group != nil }

// Finish ends the request after its next handler returned without
// panicking, given the response status: under WithRefund it gives the cost
// back when the policy's predicate holds for status. Call it at most once
// per Pass; it does nothing when WantsStatus is false.
func (s Pass) Finish(status int) {
	if s.group != nil {
		s.finishGroup(status)
	}
	o := s.o
	if o == nil {
		return
	}
	p := o.t.p
	if p.refund(status) {
		p.refundNow(s.ctx, o, s.spend)
	}
	p.release(o)
}

// refundNow gives o's cost back on the tier that admitted it and reports it.
func (p *Policy) refundNow(ctx context.Context, o *outcome, sp spend) {
	t := o.t
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
	d, err := t.lim.Refund(ctx, sp.key, sp.cost, o.decision)
	if p.observer != nil {
		e := Event{Outcome: OutcomeRefunded, Policy: t.name, Decision: d, StoreLatency: time.Since(began), Err: err}
		if err != nil {
			e.Decision = core.Decision{}
		}
		p.observe(e)
	}
	if err != nil {
		p.logs.logStore(&p.logs.refundErr, "ratewarden: refund failed; the request's cost stays spent", t.name, err)
	}
}

// finishGroup gives back, member by member, what a Group's request spent
// under each policy whose WithRefund predicate holds for status.
func (s Pass) finishGroup(status int) {
	for _, m := range *s.group {
		if m.p.refund(status) {
			m.p.refundNow(s.ctx, m.o, m.sp)
		}
		m.p.release(m.o)
	}
}
