package httplimit

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// In-flight limits (core.WithInFlight on the policy's limiter): a request the
// rates admit must also take one of its key's slots, held until its handler
// returns. The adapters release it in a defer (Pass.Release), so that a
// handler that panics, a client that hangs up and a request that times out
// give their slot back as a normal return does.

// HeaderConcurrencyLimit is the header of an in-flight refusal: a structured
// field naming the policy (its tier) and its number of slots, as
// RateLimit-Policy names a rate policy:
//
//	X-Concurrency-Limit: "default";n=5
//
// The IETF RateLimit fields describe rates; an in-flight refusal sends none of
// them, only this field and Retry-After.
const HeaderConcurrencyLimit = "X-Concurrency-Limit"

// InFlightProblem returns the problem the policy sends with the 429 of a
// request that found every slot of its key under policy taken.
func InFlightProblem(policy string, f core.InFlight) ProblemDetails {
	return ProblemDetails{
		Type: ProblemTypeQuotaExceeded, Title: "Too many requests are running at once", Status: http.StatusTooManyRequests,
		Detail:           fmt.Sprintf("At most %d requests of a client may run at once; retry when one of them has finished.", f.Slots),
		ViolatedPolicies: []string{policy},
	}
}

// inflightAnswers returns t's in-flight refusals, indexed [JSON][HEAD]: 429
// with Retry-After (core.InFlightRetryAfter, in whole seconds) and
// X-Concurrency-Limit. They are shared, read-only outcomes.
func inflightAnswers(t *tier) *[2][2]*outcome {
	f := t.lim.InFlight()
	if f.IsZero() {
		return nil
	}
	pd := InFlightProblem(t.name, f)
	retry := strconv.FormatInt(ceilSeconds(core.InFlightRetryAfter), 10)
	field := `"` + t.name + `";n=` + strconv.FormatInt(f.Slots, 10)
	mk := func(contentType string, body []byte) *outcome {
		o := &outcome{action: actionRespond, response: &Response{pd.Status, contentType, body}}
		o.spilled = true // the values lie off buf: a Header map takes them as they are
		o.addHeader(hRetryAfter, o.addValue(retry, 0))
		o.addHeader(hConcurrency, o.addValue(field, 0))
		return o
	}
	return &[2][2]*outcome{
		{mk(ContentTypeTextPlain, pd.Text()), mk(ContentTypeTextPlain, nil)},
		{mk(ContentTypeProblemJSON, pd.JSON()), mk(ContentTypeProblemJSON, nil)},
	}
}

// admitInFlight completes the admission of a request the rates admitted
// (o) under t's in-flight limit: it takes one of key's slots, within the
// store timeout (waiting for one under WithInFlightWait). Refused, it gives
// the rates' cost back (a refused request
// spends nothing), reports OutcomeInFlightRefused and answers 429; in a dry
// run it reports OutcomeInFlightDryRunRefused and lets the request go on
// without a slot. A failed store is the fail mode's, as for the rates.
func (p *Policy) admitInFlight(ctx context.Context, o *outcome, r keyfuncs.Request, t *tier, key string, cost int64, latency time.Duration) (*outcome, spend) {
	var began time.Time
	if t.timed {
		began = time.Now()
	}
	slot, ld, err := t.acquire(ctx, key)
	if err == nil && !ld.Allowed && p.inflightWait != nil && !p.dryRun {
		slot, ld, err = p.waitSlot(ctx, r, t, key, ld) // inflight_wait.go
	}
	if t.timed {
		latency += time.Since(began)
	}
	sp := spend{key: key, cost: cost, slot: slot, slotWait: t.timeout}
	if err != nil {
		answer := p.limiterError(r, t, err, latency, 0)
		if answer.action == actionPass { // failed open: the request goes on without a slot
			return p.admit(o, r, cost, latency), spend{key: key, cost: cost}
		}
		p.giveBack(ctx, t, o, key, cost)
		return answer, spend{}
	}
	if ld.Allowed {
		return p.admit(o, r, cost, latency), sp
	}
	if p.dryRun {
		if p.observer != nil {
			p.observe(Event{Outcome: OutcomeInFlightDryRunRefused, Policy: t.name, StoreLatency: latency, Request: r})
		}
		return p.admit(o, r, cost, latency), spend{key: key, cost: cost}
	}
	if p.observer != nil {
		p.observe(Event{Outcome: OutcomeInFlightRefused, Policy: t.name, StoreLatency: latency, Request: r})
	}
	p.giveBack(ctx, t, o, key, cost)
	return t.inflight[b2i(p.answersJSON(r))][b2i(r.Method() == http.MethodHead)], spend{}
}

// giveBack refunds what the rates admitted o to spend, for a request the
// in-flight limit refused, and releases o.
func (p *Policy) giveBack(ctx context.Context, t *tier, o *outcome, key string, cost int64) {
	if cost > 0 {
		rctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(nil)
		if t.timeout > 0 {
			rctx, cancel = core.WithStoreTimeout(rctx, t.timeout)
		}
		if _, err := t.lim.Refund(rctx, key, cost, o.decision); err != nil {
			p.logs.logStore(&p.logs.storeErr, "ratewarden: giving back the rate of a request the in-flight limit refused failed", t.name, err)
		}
		if cancel != nil {
			cancel()
		}
	}
	p.release(o)
}

// releaseSlot gives back sp's slot, on a context that outlives the request's
// (a client that hung up still frees its slot), within the store timeout.
func releaseSlot(ctx context.Context, slot core.Slot, wait time.Duration) {
	if !slot.Held() {
		return
	}
	if wait > 0 {
		rctx, cancel := core.WithStoreTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		ctx = rctx
	}
	// An error leaves the slot to its lease's deadline: nothing else can be
	// done after the response.
	_ = slot.Release(ctx)
}

// Release gives back the in-flight slot the request holds (core.WithInFlight),
// in one store call on a context that outlives the request's. An adapter
// defers it as soon as Handle let the request through, so that it runs
// however the next handler ends: a return, a panic, a client that hung up, a
// timeout. It does nothing when the request holds no slot, and nothing the
// second time.
func (s Pass) Release() {
	if s.spend.slot != (core.Slot{}) || s.held != nil { // inlined: nothing to do is the common case
		s.releaseSlots()
	}
}

// releaseSlots releases the slots s holds: its own, or its Group members'.
func (s Pass) releaseSlots() {
	releaseSlot(s.ctx, s.spend.slot, s.spend.slotWait)
	if s.held != nil {
		for _, sl := range s.held.list {
			releaseSlot(s.ctx, sl.slot, sl.wait)
		}
	}
}

// heldSlots are the slots a Group's members hold, for Pass.Release.
type heldSlots struct{ list []heldSlot }

// heldSlot is a Group member's slot.
type heldSlot struct {
	slot core.Slot
	wait time.Duration
}

// groupSlots returns the slots ms's members hold, nil when none does.
func groupSlots(ms []member) *heldSlots {
	var out []heldSlot
	for _, m := range ms {
		if m.sp.slot.Held() {
			out = append(out, heldSlot{m.sp.slot, m.sp.slotWait})
		}
	}
	if out == nil {
		return nil
	}
	return &heldSlots{out}
}

// SlotsHeld returns the in-flight slots the policy's limiter (with its
// tiers) holds on this instance: a gauge for the metrics modules, per
// policy, never per key.
func (p *Policy) SlotsHeld() int64 { return p.lim.SlotsHeld() }

// InFlight returns the in-flight limit of the policy's limiter; the zero
// InFlight when it has none.
func (p *Policy) InFlight() core.InFlight { return p.lim.InFlight() }
