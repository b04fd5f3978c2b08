package httplimit

import (
	"context"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
)

// rateLimitHeaders returns the rate-limit fields of a Header map response.
func rateLimitHeaders(h interface{ Get(string) string }) map[string]string {
	out := map[string]string{}
	for _, name := range headerNames {
		if v := h.Get(name); v != "" {
			out[name] = v
		}
	}
	return out
}

// fields returns the rate-limit fields a policy named "default" of limit
// 2/min writes for remaining and reset.
func fields(remaining, reset string) map[string]string {
	return map[string]string{
		HeaderXRateLimitLimit:  "2",
		HeaderXRateLimitRemain: remaining,
		HeaderXRateLimitReset:  reset,
		HeaderRateLimitPolicy:  `"default";q=2;w=60`,
		HeaderRateLimit:        `"default";r=` + remaining + ";t=" + reset,
	}
}

// Settling a refunded request rewrites its headers to the state after the
// refund, before they go out; a failure keeps the spent quota in them.
func TestSettleRewritesTheHeaders(t *testing.T) {
	for _, inContext := range []bool{false, true} {
		opts := []Option{WithRefund(successful)}
		if inContext {
			opts = append(opts, WithDecisionInContext())
		}
		p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(2), opts...)
		w, pass, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
		expect.Equal(t, fields("1", "60"), rateLimitHeaders(w.Header()), "before the handler answers")
		pass.Settle(200, w)
		expect.Equal(t, fields("2", "0"), rateLimitHeaders(w.Header()), "a refunded success tells the quota it left: whole, nothing to reset")
		pass.Finish(200)

		w, pass, _ = serve(p, fakereq.New("192.0.2.1:1"))
		pass.Settle(401, w)
		pass.Finish(401)
		expect.Equal(t, fields("1", "60"), rateLimitHeaders(w.Header()), "a failure shows what it spent")
		expect.Equal(t, int64(1), remaining(t, p, "192.0.2.1:1"))
	}
}

// The reset changes with the refund too: a GCRA key given its cost back is
// as fresh as before the request.
func TestSettleRewritesTheReset(t *testing.T) {
	p, clk := memPolicy(t, core.GCRA, core.PerMinute(2), WithRefund(successful))
	_, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	pass.Finish(401) // spends half the quota: 30 s to refill
	clk.Advance(10e9)
	w, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	expect.Equal(t, fields("0", "50"), rateLimitHeaders(w.Header()))
	pass.Settle(204, w)
	pass.Finish(204)
	expect.Equal(t, fields("1", "20"), rateLimitHeaders(w.Header()))
}

// Settle gives back once: a second Settle, and the Finish after it, give
// nothing, even for a status the predicate would refund.
func TestSettleIsOnce(t *testing.T) {
	rec := &recorder{}
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(2), WithRefund(successful), WithObserver(rec))
	w, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	pass.Settle(200, w)
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeRefunded}, rec.outcomes())
	expect.Equal(t, int64(2), remaining(t, p, "192.0.2.1:1"))

	w, pass, _ = serve(p, fakereq.New("192.0.2.1:1"))
	pass.Settle(500, w)
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, int64(1), remaining(t, p, "192.0.2.1:1"), "settled as a failure: the later success is not refunded")
	expect.Equal(t, fields("1", "60"), rateLimitHeaders(w.Header()))
}

// A refund that fails leaves the headers as they were, and is reported.
func TestSettleFailedRefundKeepsTheHeaders(t *testing.T) {
	rec := &recorder{}
	logger, logs := logBuffer()
	p, _ := newPolicy(t, &refundFails{}, core.FixedWindow, core.PerMinute(2), nil, WithRefund(successful), WithObserver(rec), WithLogger(logger))
	w, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	before := rateLimitHeaders(w.Header())
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, before, rateLimitHeaders(w.Header()))
	expect.Equal(t, fields("1", "60"), before)
	expect.Equal(t, OutcomeRefunded, rec.last().Outcome)
	expect.ErrorIs(t, rec.last().Err, errNoRefund)
	expect.Contains(t, logs.String(), "refund failed")
}

// A HeaderSetter gets the headers again, after the refund; a writer that
// sets none, a nil one, and a policy that writes none on allowed requests
// get nothing, and the refund still happens.
func TestSettleWriters(t *testing.T) {
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(2), WithRefund(successful))
	w := newSetterWriter()
	pass, _ := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	expect.Equal(t, "1", w.headers[HeaderXRateLimitRemain])
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, fields("2", "0"), w.headers)

	for _, bare := range []ResponseWriter{&bareWriter{}, nil} {
		pass, _ = p.Handle(context.Background(), fakereq.New("192.0.2.2:1"), &bareWriter{})
		pass.Settle(200, bare)
		pass.Finish(200)
		expect.Equal(t, int64(2), remaining(t, p, "192.0.2.2:1"))
	}

	p, _ = memPolicy(t, core.FixedWindow, core.PerMinute(2), WithRefund(successful), WithoutHeadersOnAllowed())
	rw, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	pass.Settle(200, rw)
	pass.Finish(200)
	expect.Empty(t, rateLimitHeaders(rw.Header()))
	expect.Equal(t, int64(2), remaining(t, p, "192.0.2.1:1"))
}

// Settle and Finish do nothing for a Pass that wants no status.
func TestSettleWithoutRefund(t *testing.T) {
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(2))
	w, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	must.False(t, pass.WantsStatus())
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, fields("1", "60"), rateLimitHeaders(w.Header()))
	expect.Equal(t, int64(1), remaining(t, p, "192.0.2.1:1"))
}

// A Group settles each member's refund under its own WithRefund and
// rewrites its lists; X-RateLimit-* follow the member that governs after
// the refunds.
func TestSettleGroup(t *testing.T) {
	failuresOnly := WithRefund(successful)
	ps, _ := groupOf(t, map[string]int64{"login": 2, "all": 3}, []string{"login", "all"}, map[string][]Option{"login": {failuresOnly}})
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	w, pass, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	must.True(t, next)
	expect.Equal(t, `"login";r=1;t=30, "all";r=2;t=20`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, "1", w.Header().Get(HeaderXRateLimitRemain), "login governs")
	pass.Settle(200, w)
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, `"login";r=2;t=0, "all";r=2;t=20`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, `"login";q=2;w=60, "all";q=3;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, map[string]string{
		HeaderXRateLimitLimit: "3", HeaderXRateLimitRemain: "2", HeaderXRateLimitReset: "20",
		HeaderRateLimitPolicy: `"login";q=2;w=60, "all";q=3;w=60`, HeaderRateLimit: `"login";r=2;t=0, "all";r=2;t=20`,
	}, rateLimitHeaders(w.Header()), "all governs once login gave its cost back")
	expect.Equal(t, int64(2), remaining(t, ps[0], "192.0.2.1:1"), "refunded once")
	expect.Equal(t, int64(2), remaining(t, ps[1], "192.0.2.1:1"))

	hs := &headerSetter{}
	pass, _ = g.Handle(context.Background(), fakereq.New("192.0.2.1:1"), hs)
	pass.Settle(403, hs)
	pass.Finish(200)
	expect.Equal(t, `"login";r=1;t=30, "all";r=1;t=40`, hs.got[HeaderRateLimit], "a failure keeps what it spent")
	expect.Equal(t, int64(1), remaining(t, ps[0], "192.0.2.1:1"))
}
