package httplimit

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// The store's circuit breaker lives in the limiter (core.WithBreaker): once
// the store has failed repeatedly, the limiter answers core.ErrBreakerOpen at
// once instead of asking it. The policy applies its fail mode to those
// answers as to any store failure, reports them as OutcomeBreakerOpen, and
// logs when a tier's breaker opens and closes.

// breakerLog is what a tier has logged of its limiter's breaker: 1 when an
// opening was logged and no closing since. It is read and written with
// sync/atomic's functions (a plain word, so that a Group's copy of a tier
// for its headers copies it without complaint).
type breakerLog uint32

func (b *breakerLog) open() bool { return atomic.LoadUint32((*uint32)(b)) == 1 }

func (b *breakerLog) swap(from, to uint32) bool {
	return atomic.CompareAndSwapUint32((*uint32)(b), from, to)
}

// breakerOpen answers a request the limiter's open breaker refused, err
// being core.ErrBreakerOpen and wait the time until its next probe: the
// request passes (fail open, or a dry run), or gets 503 with a Retry-After
// of wait rounded up to whole seconds.
func (p *Policy) breakerOpen(r keyfuncs.Request, t *tier, wait time.Duration, err error) *outcome {
	p.noteBreakerOpened(t, err)
	if p.observer != nil {
		p.observe(Event{Outcome: OutcomeBreakerOpen, Policy: t.name, Err: err, Request: r})
	}
	if !p.failClosed || p.dryRun {
		return p.passOutcome
	}
	shared := p.failOutcomes[b2i(p.answersJSON(r))][b2i(r.Method() == "HEAD")]
	o := p.newOutcome(t, &core.Decision{})
	o.decided, o.action, o.response = false, actionRespond, shared.response
	o.addHeader(hRetryAfter, o.appendInt(max(ceilSeconds(wait), 1)))
	return o
}

// noteBreakerOpened logs, once per opening, that t's breaker is open, after
// a store error err (or a refusal of the open breaker).
func (p *Policy) noteBreakerOpened(t *tier, err error) {
	if t.breaker.open() || t.lim.BreakerState() == core.BreakerClosed || !t.breaker.swap(0, 1) {
		return
	}
	msg := "ratewarden: the store failed repeatedly; its circuit breaker is open: requests pass unlimited (fail open) at once, without asking it, until a probe finds it back"
	if p.failClosed && !p.dryRun {
		msg = "ratewarden: the store failed repeatedly; its circuit breaker is open: requests get 503 (fail closed) at once, without asking it, until a probe finds it back"
	}
	p.logs.logStore(&p.logs.breakerOpened, msg, t.name, err)
}

// noteBreakerClosed logs that t's breaker closed, when an opening was
// logged and the store has just decided a request of t.
func (p *Policy) noteBreakerClosed(t *tier) {
	if t.lim.BreakerState() != core.BreakerClosed || !t.breaker.swap(1, 0) {
		return
	}
	p.logs.logStore(&p.logs.breakerClosed, "ratewarden: the store answers again; its circuit breaker is closed and the limiter decides exactly", t.name, nil)
}

// isBreakerOpen reports whether err is the open breaker's refusal.
func isBreakerOpen(err error) bool {
	return err == core.ErrBreakerOpen || errors.Is(err, core.ErrBreakerOpen)
}
