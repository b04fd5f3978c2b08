package httplimit

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func successful(status int) bool { return status < 400 }

// Counting only failures: successful responses give their cost back, so
// only the failures spend the limit of 2.
func TestRefundCountsOnlyFailures(t *testing.T) {
	rec := &recorder{}
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(2), WithRefund(successful), WithObserver(rec))
	var codes []int
	for _, status := range []int{200, 200, 200, 401, 204, 401, 200, 200} {
		w, pass, next := serve(p, fakereq.New("192.0.2.1:1"))
		codes = append(codes, w.Code)
		if next {
			must.True(t, pass.WantsStatus())
			pass.Finish(status)
		}
	}
	expect.Equal(t, []int{200, 200, 200, 200, 200, 200, 429, 429}, codes, "two failures spend the limit")
	refunded := 0
	for _, e := range rec.events {
		if e.Outcome == OutcomeRefunded {
			refunded++
			expect.NoError(t, e.Err)
			expect.Equal(t, "default", e.Policy)
		}
	}
	expect.Equal(t, 4, refunded)
}

// Refunds go to the tier that admitted the request, with the decision it
// was admitted with.
func TestRefundOnTheAdmittingTier(t *testing.T) {
	p, _ := tiered(t, WithRefund(successful))
	for range 5 {
		_, pass, next := serve(p, fakereq.New("192.0.2.1:1", "X-Plan", "paid"))
		must.True(t, next)
		pass.Finish(200)
	}
	d, err := p.Peek(context.Background(), "paid", "192.0.2.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(3), d.Remaining)
}

// refundFails is a store that decides but cannot refund.
type refundFails struct{ localMapStore }

var errNoRefund = errors.New("refund failed")

func (s *refundFails) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if req.Cost < 0 {
		return core.Decision{}, errNoRefund
	}
	return s.localMapStore.Take(ctx, req)
}

// A failed refund reaches the observer, or the log without one, and never
// the response.
func TestRefundErrorsAreReported(t *testing.T) {
	rec := &recorder{}
	p, _ := newPolicy(t, &refundFails{}, core.GCRA, core.PerMinute(5), nil, WithRefund(successful), WithObserver(rec))
	_, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	pass.Finish(200)
	expect.Equal(t, OutcomeRefunded, rec.last().Outcome)
	expect.ErrorIs(t, rec.last().Err, errNoRefund)

	logger, buf := logBuffer()
	p, _ = newPolicy(t, &refundFails{}, core.GCRA, core.PerMinute(5), nil, WithRefund(successful), WithLogger(logger))
	_, pass, _ = serve(p, fakereq.New("192.0.2.1:1"))
	pass.Finish(200)
	expect.Contains(t, buf.String(), "refund failed")
}

// Without WithRefund, and for requests that spent nothing or were not
// admitted, there is nothing to finish; Finish on them does nothing.
func TestNothingToFinish(t *testing.T) {
	p, _ := memPolicy(t, core.GCRA, core.PerMinute(1))
	_, pass, _ := serve(p, fakereq.New("192.0.2.1:1"))
	expect.False(t, pass.WantsStatus())
	pass.Finish(200)
	_, pass, next := serve(p, fakereq.New("192.0.2.1:1"))
	expect.False(t, next)
	pass.Finish(200)

	rec := &recorder{}
	free := WithCost(func(keyfuncs.Request) int64 { return 0 })
	p, _ = memPolicy(t, core.GCRA, core.PerMinute(1), WithRefund(successful), free, WithObserver(rec))
	_, pass, next = serve(p, fakereq.New("192.0.2.1:1"))
	expect.True(t, next)
	expect.False(t, pass.WantsStatus(), "a request that spent nothing gets nothing back")
	expect.Equal(t, []Outcome{OutcomeAllowed}, rec.outcomes())
}

// With WithDecisionInContext, a refunded request's context stays valid
// through Finish.
func TestRefundWithDecisionInContext(t *testing.T) {
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(1), WithRefund(successful), WithDecisionInContext())
	for range 3 {
		_, pass, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
		d, ok := DecisionFromContext(pass.Context())
		must.True(t, ok)
		expect.Equal(t, int64(0), d.Remaining)
		pass.Finish(http.StatusOK)
	}
}

// A denied handler renders the 429 itself, after the policy set the headers.
func TestDeniedHandlerWritesAfterTheHeaders(t *testing.T) {
	var seen []string
	h := WithDeniedHandler(func(w ResponseWriter, r keyfuncs.Request, d core.Decision) {
		rw := w.(http.ResponseWriter)
		seen = append(seen, rw.Header().Get(HeaderRetryAfter))
		pd := DeniedProblem(d)
		pd.Detail = "upgrade to the paid plan"
		rw.Header().Set("Content-Type", ContentTypeProblemJSON)
		rw.WriteHeader(pd.Status)
		_, _ = rw.Write(pd.JSON())
	})
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(1), h, WithLogger(slog.New(slog.DiscardHandler)))
	serve(p, fakereq.New("192.0.2.1:1"))
	w := httptest.NewRecorder()
	_, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	expect.False(t, next)
	expect.Equal(t, []string{"60"}, seen)
	expect.Equal(t, 429, w.Code)
	expect.JSONEq(t, `{"type":"`+ProblemTypeQuotaExceeded+`","title":"`+titleTooMany+`","status":429,"detail":"upgrade to the paid plan","violated-policies":["default"]}`, w.Body.String())
}

// The exported building blocks give exactly what the policy sends.
func TestProblemBuildingBlocksMatchTheDefaults(t *testing.T) {
	p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(1))
	for _, accept := range []string{"", "application/json"} {
		for _, method := range []string{"GET", "HEAD"} {
			serve(p, fakereq.New("192.0.2.9:1"))
			r := fakereq.New("192.0.2.9:1", "Accept", accept)
			r.MethodName = method
			w, _, _ := serve(p, r)
			var d core.Decision
			d.Limit.Name = "default"
			want := DefaultDenied(r, d)
			expect.Equal(t, want.Status, w.Code)
			expect.Equal(t, want.ContentType, w.Header().Get("Content-Type"))
			expect.Equal(t, string(want.Body), w.Body.String())
		}
	}
	expect.Equal(t, `{"type":"about:blank","title":"Unauthorized","status":401}`, string(KeyErrorProblem(keyfuncs.ErrKey).JSON()))
	expect.Equal(t, `{"type":"about:blank","title":"Service Unavailable","status":503}`, string(UnavailableProblem().JSON()))
	expect.Equal(t, 500, KeyErrorProblem(keyfuncs.ErrPeerNotIP).Status)
	expect.Equal(t, "Too Many Requests\n", string(DeniedProblem(core.Decision{}).Text()))
}

// With no observer, tiers or refund, a request costs what it did: no
// allocation with a HeaderSetter writer, and no event.
func TestDefaultPathAllocatesNothing(t *testing.T) {
	p, _ := newPolicy(t, &localMapStore{}, core.GCRA, core.PerSecond(1_000_000), nil)
	r, w := fakereq.New("192.0.2.1:1"), newSetterWriter()
	allocs := testing.AllocsPerRun(200, func() {
		pass, _ := p.Handle(context.Background(), r, w)
		if pass.WantsStatus() {
			pass.Finish(200)
		}
	})
	expect.Zero(t, allocs)
	rec := &recorder{events: make([]Event, 0, 1000)}
	p, _ = newPolicy(t, &localMapStore{}, core.GCRA, core.PerSecond(1_000_000), nil, WithObserver(rec))
	allocs = testing.AllocsPerRun(200, func() { p.Handle(context.Background(), r, w) })
	expect.Zero(t, allocs, "an observer that allocates nothing costs no allocation")

	lim, err := core.NewLimiter(&localMapStore{}, core.GCRA, core.PerSecond(1_000_000))
	must.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerSecond(900_000))
	must.NoError(t, err)
	plan, err := keyfuncs.Header("X-Plan")
	must.NoError(t, err)
	p, err = New(lim, WithKey(peerKey), WithTiers(plan, paid))
	must.NoError(t, err)
	r = fakereq.New("192.0.2.1:1", "X-Plan", "paid")
	allocs = testing.AllocsPerRun(200, func() { p.Handle(context.Background(), r, w) })
	expect.Zero(t, allocs, "picking a tier costs no allocation")
	expect.Equal(t, `"paid";q=900000;w=1`, w.headers[HeaderRateLimitPolicy])
}
