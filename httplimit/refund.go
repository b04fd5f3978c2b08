package httplimit

import (
	"context"

	"github.com/ratewarden/ratewarden/core"
)

// WithRefund gives a request's cost back after its handler ran when
// refund(status) holds for the response status, a settle at 0 (see
// WithSettle, which it replaces or is replaced by): to count only failures,
// as a login limit should,
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
		p.settle = &settler{refund: refund}
		return nil
	}
}

// refundNow gives o's cost back on the tier that admitted it and reports it:
// a Group's rollback, when a later policy answered the request.
// It returns the decision after the refund, and false when the refund
// failed.
func (p *Policy) refundNow(ctx context.Context, o *outcome, sp spend) (core.Decision, bool) {
	t := o.t
	d, latency, err := p.afterResponse(ctx, t, func(ctx context.Context) (core.Decision, error) {
		return t.lim.Refund(ctx, sp.key, sp.cost, o.decision)
	})
	if p.observer != nil {
		e := Event{Outcome: OutcomeRefunded, Policy: t.name, Decision: d, StoreLatency: latency, Err: err}
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
