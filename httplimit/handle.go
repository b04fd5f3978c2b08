package httplimit

import (
	"context"
	"net/http"
	"time"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// accept returns r's Accept header, without a copy when r can peek.
func accept(r keyfuncs.Request) string {
	if hp, ok := r.(HeaderPeeker); ok {
		return hp.PeekHeader("Accept")
	}
	return r.Header("Accept")
}

// headerMap is the net/http way to set headers (see ResponseWriter).
type headerMap interface {
	Header() http.Header
}

// Handle runs the policy on one request: it decides, sets the rate-limit
// headers on w and, when the request must not go on (denied, no key, a failed
// store with WithFailClosed), writes the answer. A leaky-bucket request is held
// here for its delay. It returns whether the adapter should call the next
// handler and, when it should, the Pass for it: Pass.Context is the context
// that handler should see (ctx itself, or, with WithDecisionInContext, a
// context carrying the decision for DecisionFromContext); under WithRefund,
// Pass.Settle takes the response status when it is known and rewrites the
// headers after a refund, and Pass.Finish ends the request once that handler
// returned. When it
// returns false the request is finished: it was answered, or its client left
// while it was held.
//
// ctx is the request's context: its end aborts the store call and the hold.
// r and w are not kept after Handle returns.
func (p *Policy) Handle(ctx context.Context, r keyfuncs.Request, w ResponseWriter) (Pass, bool) {
	var arrival time.Time
	if a, ok := r.(Arrival); ok {
		arrival = a.ArrivedAt()
	}
	o, sp := p.decide(ctx, r, arrival)
	if o.action == actionRespond {
		p.respond(o, r, w)
		return Pass{ctx: ctx}, false
	}
	writeHeaders(o, w, "")
	// Only a held request asks whether its client is still there: ctx.Err
	// costs, and a server may hand every request a context that never ends.
	if o.decision.Delay > 0 && !o.wait(holdContext(ctx, r), hangUpChecker(r)) {
		p.release(o)
		releaseSlot(ctx, sp.slot, sp.slotWait)
		return Pass{ctx: ctx}, false
	}
	pass := Pass{ctx: ctx, spend: sp}
	if o.refund {
		pass.o = o // released by Finish
	}
	if o.becomesContext() {
		pass.ctx = o.asContext(ctx)
		return pass, true
	}
	if !o.refund {
		p.release(o)
	}
	return pass, true
}

// respond writes o's answer to w: its Response, or, for a denial under
// WithDeniedHandler, what the handler writes once the headers are set.
func (p *Policy) respond(o *outcome, r keyfuncs.Request, w ResponseWriter) {
	resp := o.response
	if resp == nil {
		writeHeaders(o, w, "")
		d := o.decision
		p.release(o)
		p.denied(w, r, d)
		return
	}
	writeHeaders(o, w, resp.ContentType)
	p.release(o)
	// A write error means the client is gone: nobody is left to tell.
	w.WriteHeader(resp.Status)
	if len(resp.Body) > 0 {
		writeBody(w, resp.Body)
	}
}

// writeBody writes body, which is never modified, to w: handed over
// whole to a SharedBodyWriter (with no spare capacity, which an append could
// write into), else through Write.
func writeBody(w ResponseWriter, body []byte) {
	if sw, ok := w.(SharedBodyWriter); ok {
		sw.WriteSharedBody(body[:len(body):len(body)])
		return
	}
	_, _ = w.Write(body)
}

// holdContext is the context a held request waits on: r's HoldContext when
// it has one, else ctx.
func holdContext(ctx context.Context, r keyfuncs.Request) context.Context {
	if h, ok := r.(HoldContext); ok {
		return h.HoldContext()
	}
	return ctx
}

// hangUpChecker returns r as a HangUpChecker, or nil.
func hangUpChecker(r keyfuncs.Request) HangUpChecker {
	hc, _ := r.(HangUpChecker)
	return hc
}

// release hands an outcome back for reuse by later requests, which saves its
// allocation. Handle calls it once the outcome's header values were copied
// (a HeaderSetter copies them; setHeaderMap gives a net/http Header map values of
// their own). Releasing an outcome the policy shares, or one that becomes the
// request's context, is a no-op.
func (p *Policy) release(o *outcome) {
	if o.pooled && !o.becomesContext() {
		p.pool.Put(o)
	}
}

// writeHeaders sets o's headers, and the Content-Type when set, on w, the
// way w supports.
func writeHeaders(o *outcome, w ResponseWriter, contentType string) {
	if o.nh == 0 && contentType == "" {
		return
	}
	switch w := w.(type) {
	case headerMap:
		o.setHeaderMap(w.Header(), contentType)
	case HeaderSetter:
		w.SetHeaders(Headers{o: o, contentType: contentType})
	}
}

// defaultKey is the key New uses unless WithKey says otherwise: the client
// IP, the peer address, no proxy trusted.
var defaultKey = func() keyfuncs.Func {
	f, err := keyfuncs.IP()
	if err != nil {
		panic(err) // IP takes no option here: it cannot fail
	}
	return f
}()
