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
// A handler that panics before it sends its status gets no refund: its
// response is not known. A request with a cost of 0 spends nothing and gets
// none.
//
// The refund is settled when the status is known and the response's headers
// are not yet sent (see Pass.Settle), so that a refunded response's
// X-RateLimit-Remaining, X-RateLimit-Reset and RateLimit tell the state after
// the refund: net/http's and Gin's adapters wrap the writer (for WithRefund's
// policies only) and settle as the handler sends its status, Echo's settle
// in the response's Before hook, and Fiber's, whose server sends the headers
// once the handler returned, settle then; so do the others for a handler
// that sent nothing or returned an error the framework answers (Echo's
// status is the error's code, Fiber's the one its default error handler
// gives). gRPC sends its header metadata before the status is known: there a
// refunded call's trailer carries the fields after the refund (see package
// grpcmw). The refund runs on the request's goroutine, under the store
// timeout, on a context that outlives the client: a refunded response's
// headers wait for its store call. A failed refund leaves the headers as
// they were.
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
// once the response status is known (Settle) and what to release once that
// handler returned (Finish). It is a small value: with no WithRefund it holds
// only the context. Copies of a Pass share its state.
type Pass struct {
	ctx   context.Context
	o     *outcome     // held for Finish under WithRefund; nil otherwise
	spend spend        // what o's request spent, when o is set
	group *groupRefund // a Group's members held for Finish under WithRefund
}

// Context returns the context the next handler should see.
func (s Pass) Context() context.Context { return s.ctx }

// WantsStatus reports whether Settle and Finish need the response status:
// the policy refunds (WithRefund) and the request was admitted. An adapter
// calls them only then, so that the default path reads no status and wraps
// no writer.
func (s Pass) WantsStatus() bool { return s.o != nil || s.group != nil }

// Finish ends the request after its next handler returned without
// panicking, given the response status: under WithRefund it gives the cost
// back when the policy's predicate holds for status, unless Settle already
// settled the refund. Call it once per Pass, last; it does nothing when
// WantsStatus is false.
func (s Pass) Finish(status int) {
	if s.group != nil {
		s.group.settle(s.ctx, status, nil)
		s.group.release()
		return
	}
	o := s.o
	if o == nil {
		return
	}
	s.settleOne(status, nil)
	o.t.p.release(o)
}

// refundNow gives o's cost back on the tier that admitted it and reports it.
// It returns the decision after the refund, and false when the refund
// failed.
func (p *Policy) refundNow(ctx context.Context, o *outcome, sp spend) (core.Decision, bool) {
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
		return core.Decision{}, false
	}
	return d, true
}
