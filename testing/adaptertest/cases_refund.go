package adaptertest

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// countFailures is WithRefund counting only failures: a response below 400
// gives its cost back.
var countFailures = httplimit.WithRefund(func(status int) bool { return status < 400 })

// checkRefundedHeadersTellTheRefund: under WithRefund the adapter settles
// the refund when the status is known, before the headers go out, so a
// refunded response's rate-limit headers already tell the quota after the
// refund (as the request had never come: the quota whole, nothing to reset),
// and a failure's tell what it spent. The handler still sees the decision
// that admitted it.
func checkRefundedHeadersTellTheRefund(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(2), nil, countFailures)
	for i := range 3 {
		expect.Equal(t, ok("ok, remaining 1", allowed("2", "60", "2", "0")), e.do("POST", "/", peerA, StatusHeader, "200"), "success %d", i)
	}
	head := e.do("HEAD", "/users/7", peerA)
	expect.Equal(t, 200, head.Status)
	expect.Equal(t, limitHeaders(allowed("2", "60", "2", "0")), limitHeaders(head.Headers), "a response without a body is settled too")
	expect.Equal(t, response{Status: 401, Headers: allowed("2", "60", "1", "60"), Body: "ok, remaining 1"},
		e.do("POST", "/", peerA, StatusHeader, "401"), "a failure shows the quota it spent")
	expect.Equal(t, response{Status: 201, Headers: allowed("2", "60", "1", "60"), Body: "ok, remaining 0"}, e.do("POST", "/", peerA, StatusHeader, "201"),
		"a success after it gives back its own cost only")
	failed := e.do("POST", "/", peerA, StatusHeader, "500") // the framework's error handler may answer it
	expect.Equal(t, 500, failed.Status)
	expect.Equal(t, limitHeaders(allowed("2", "60", "0", "60")), limitHeaders(failed.Headers))
	expect.Equal(t, 429, e.do("POST", "/", peerA).Status, "two failures spent the quota")
	expect.Equal(t, int64(7), e.calls.Load())
}

// limitHeaders returns h without its Content-Type, which frameworks set
// their own ways on a HEAD response or an error their error handler answers.
func limitHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if k != "Content-Type" {
			out[k] = v
		}
	}
	return out
}

// checkRefundedGroupHeadersTellTheRefund: under a Group each policy refunds
// under its own WithRefund, and the adapter rewrites the group's headers
// before they go out: the RateLimit list tells every policy's quota after
// the refunds, and X-RateLimit-* the policy that governs after them.
func checkRefundedGroupHeadersTellTheRefund(t *testing.T, a Adapter) {
	must.NotNil(t, a.Middleware, "Adapter.Middleware: the case runs a Group")
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(t0)
	policy := func(name string, rate int64, opts ...httplimit.Option) *httplimit.Policy {
		lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(rate).Named(name), core.WithClock(clk), core.WithNamespace(name))
		must.NoError(t, err)
		p, err := httplimit.New(lim, append([]httplimit.Option{quiet}, opts...)...)
		must.NoError(t, err)
		return p
	}
	g, err := httplimit.NewGroup(policy("login", 2, countFailures), policy("all", 3))
	must.NoError(t, err)
	e := newEnv(t)
	srv, err := a.Middleware(t, g, func(d core.Decision, ok bool) string {
		e.calls.Add(1)
		return Body(d, ok)
	})
	must.NoError(t, err)
	if srv.Close != nil {
		t.Cleanup(srv.Close)
	}
	e.srv = srv
	headers := func(limit, remaining, reset, rateLimit string) map[string]string {
		return map[string]string{
			"Content-Type":          "text/plain; charset=utf-8",
			"X-Ratelimit-Limit":     limit,
			"X-Ratelimit-Remaining": remaining,
			"X-Ratelimit-Reset":     reset,
			"Ratelimit-Policy":      `"login";q=2;w=60, "all";q=3;w=60`,
			"Ratelimit":             rateLimit,
		}
	}
	expect.Equal(t, ok("ok, no decision", headers("3", "2", "60", `"login";r=2;t=0, "all";r=2;t=60`)),
		e.do("POST", "/", peerA), "login gave its cost back: all governs")
	expect.Equal(t, response{Status: 401, Headers: headers("2", "1", "60", `"login";r=1;t=60, "all";r=1;t=60`), Body: "ok, no decision"},
		e.do("POST", "/", peerA, StatusHeader, "401"), "a failure spends under both")
	expect.Equal(t, ok("ok, no decision", headers("3", "0", "60", `"login";r=1;t=60, "all";r=0;t=60`)),
		e.do("POST", "/", peerA))
	expect.Equal(t, 429, e.do("POST", "/", peerA).Status, "all is spent")
	expect.Equal(t, int64(3), e.calls.Load())
}
