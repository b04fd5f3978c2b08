package adaptertest

import (
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// outcomes is an Observer that counts events by outcome and keeps their
// policy names.
type outcomes struct {
	mu       sync.Mutex
	counts   map[httplimit.Outcome]int
	policies []string
}

func (o *outcomes) Observe(e httplimit.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[httplimit.Outcome]int{}
	}
	o.counts[e.Outcome]++
	o.policies = append(o.policies, e.Policy)
}

func (o *outcomes) count(oc httplimit.Outcome) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[oc]
}

// quiet keeps the policy's log lines (a peer that is not an IP, on
// purpose) out of the test output; a case that reads them sets its own.
var quiet = httplimit.WithLogger(slog.New(slog.DiscardHandler))

func checkDryRun(t *testing.T, a Adapter) {
	obs := &outcomes{}
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(1), nil, httplimit.WithDryRun(), httplimit.WithObserver(obs))
	expect.Equal(t, ok("ok, remaining 0", allowed("1", "60", "0", "60")), e.do("GET", "/", peerA))
	e.clk.Advance(20 * time.Second)
	for range 2 {
		expect.Equal(t, ok("ok, remaining 0", allowed("1", "60", "0", "40")), e.do("GET", "/", peerA), "would be denied: 200, truthful headers, no Retry-After")
	}
	expect.Equal(t, 2, obs.count(httplimit.OutcomeDryRunDenied))
	expect.Equal(t, int64(3), e.calls.Load())
}

func checkEveryOutcomeReachesTheObserver(t *testing.T, a Adapter) {
	obs := &outcomes{}
	skip := httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" })
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(1), nil, httplimit.WithObserver(obs), skip,
		httplimit.WithRefund(func(status int) bool { return status == 204 }))
	expect.Equal(t, 204, e.do("GET", "/", peerA, StatusHeader, "204").Status, "allowed, then refunded")
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	expect.Equal(t, 429, e.do("GET", "/", peerA).Status)
	expect.Equal(t, 200, e.do("GET", "/health", peerA).Status)
	expect.Equal(t, 500, e.do("GET", "/", "not-an-address").Status)

	dry := start(t, a, nil, core.FixedWindow, core.PerMinute(1), nil, httplimit.WithObserver(obs), httplimit.WithDryRun())
	dry.do("GET", "/", peerA)
	dry.do("GET", "/", peerA)
	open := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), nil, httplimit.WithObserver(obs))
	expect.Equal(t, 200, open.do("GET", "/", peerA).Status)
	closed := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), nil, httplimit.WithObserver(obs), httplimit.WithFailClosed())
	expect.Equal(t, 503, closed.do("GET", "/", peerA).Status)
	full := start(t, a, oneKeyStore(t), core.GCRA, core.PerMinute(1), nil, httplimit.WithObserver(obs))
	expect.Equal(t, 200, full.do("GET", "/", peerA).Status)
	expect.Equal(t, 503, full.do("GET", "/", peerB).Status)
	// A breaker that opens at the first failure (a failed_open), then answers
	// at once: fail open, as breaker_open.
	trip := core.DefaultBreaker()
	trip.Failures = 1
	tripped := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), []core.Option{core.WithBreaker(trip)}, httplimit.WithObserver(obs))
	expect.Equal(t, 200, tripped.do("GET", "/", peerA).Status)
	expect.Equal(t, 200, tripped.do("GET", "/", peerA).Status)
	settled := start(t, a, nil, core.FixedWindow, core.PerMinute(5), nil, httplimit.WithObserver(obs), httplimit.WithSettleHeader(CostHeader))
	expect.Equal(t, 200, settled.do("GET", "/", peerA, CostHeader, "3").Status)

	inflightAllowed := inflightOutcomes(t, a, obs)

	// A penalty box: its allowed request is not counted, its denial starts
	// the block, which refuses the next request.
	unallowed := httplimit.ObserverFunc(func(e httplimit.Event) {
		if e.Outcome != httplimit.OutcomeAllowed {
			obs.Observe(e)
		}
	})
	boxed := start(t, a, nil, core.FixedWindow, core.PerMinute(1), []core.Option{core.WithBlockFor(time.Hour)}, httplimit.WithObserver(unallowed))
	boxed.do("GET", "/", peerA)
	expect.Equal(t, 429, boxed.do("GET", "/", peerA).Status, "denied: a block starts")
	expect.Equal(t, 429, boxed.do("GET", "/", peerA).Status, "blocked")

	for _, oc := range httplimit.Outcomes() {
		want := 1
		switch oc {
		case httplimit.OutcomeAllowed:
			want = 5 + inflightAllowed // two here, one in the dry run, one in the full store, one settled, and the in-flight ones
		case httplimit.OutcomeFailedOpen:
			want = 2 // one here, one opening the breaker
		case httplimit.OutcomeDenied:
			want = 2 // one here, one starting a block
		}
		expect.Equal(t, want, obs.count(oc), oc.String())
	}
}

// tiered gives an env the tier "paid" (3/min) of its limiter, picked by the
// X-Plan header.
func tiered(t *testing.T) func(lim *core.Limiter) []httplimit.Option {
	return func(lim *core.Limiter) []httplimit.Option {
		paid, err := lim.Tier("paid", core.PerMinute(3))
		must.NoError(t, err)
		pick, err := keyfuncs.Header("X-Plan")
		must.NoError(t, err)
		return []httplimit.Option{httplimit.WithTiers(pick, paid)}
	}
}

func checkTiers(t *testing.T, a Adapter) {
	obs := &outcomes{}
	e := newEnv(t)
	e.more = tiered(t)
	e.run(a, nil, core.FixedWindow, core.PerMinute(1), nil, httplimit.WithObserver(obs))
	paidHeaders := func(remaining string) map[string]string {
		h := allowed("3", "60", remaining, "60")
		h["Ratelimit-Policy"] = `"paid";q=3;w=60`
		h["Ratelimit"] = `"paid";r=` + remaining + ";t=60"
		return h
	}
	expect.Equal(t, ok("ok, remaining 2", paidHeaders("2")), e.do("GET", "/", peerA, "X-Plan", "paid"))
	expect.Equal(t, ok("ok, remaining 0", allowed("1", "60", "0", "60")), e.do("GET", "/", peerA), "no plan: the default tier, counted apart")
	expect.Equal(t, 429, e.do("GET", "/", peerA, "X-Plan", "platinum").Status, "an unknown plan gets the default tier")
	expect.Equal(t, ok("ok, remaining 1", paidHeaders("1")), e.do("GET", "/", peerA, "X-Plan", "paid"))
	expect.Equal(t, ok("ok, remaining 0", paidHeaders("0")), e.do("GET", "/", peerA, "X-Plan", "paid"))
	r := e.do("GET", "/", peerA, "X-Plan", "paid", "Accept", "application/json")
	expect.Equal(t, 429, r.Status)
	expect.Equal(t, `"paid";q=3;w=60`, r.Headers["Ratelimit-Policy"])
	expect.Contains(t, r.Body, `"violated-policies":["paid"]`)
	expect.Equal(t, []string{"paid", "default", "default", "paid", "paid", "paid"}, obs.policies, "policy names come from the configuration, never the request")
}

func checkRefundCountsOnlyFailures(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(2), nil,
		httplimit.WithRefund(func(status int) bool { return status < 400 }))
	for i := range 5 {
		r := e.do("POST", "/", peerA, StatusHeader, "200")
		expect.Equal(t, 200, r.Status, "success %d gives its cost back", i)
	}
	for _, status := range []int{401, 500} {
		expect.Equal(t, status, e.do("POST", "/", peerA, StatusHeader, strconv.Itoa(status)).Status)
	}
	expect.Equal(t, 429, e.do("POST", "/", peerA, StatusHeader, "200").Status, "two failures spent the limit")
	expect.Equal(t, int64(7), e.calls.Load())
}

func checkDeniedHandlerRendersThroughTheFramework(t *testing.T, a Adapter) {
	must.NotNil(t, a.RenderJSON, "Adapter.RenderJSON")
	render := httplimit.WithDeniedHandler(func(w httplimit.ResponseWriter, r keyfuncs.Request, d core.Decision) {
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "slow down, " + r.Method()
		a.RenderJSON(w, r, pd.Status, pd)
	})
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(1), nil, render)
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	r := e.do("GET", "/", peerA)
	expect.Equal(t, 429, r.Status)
	expect.Equal(t, "60", r.Headers["Retry-After"], "the policy's headers are set before the handler renders")
	expect.Equal(t, `"default";r=0;t=60`, r.Headers["Ratelimit"])
	expect.Contains(t, r.Headers["Content-Type"], "application/json")
	expect.JSONEq(t, `{"type":"`+httplimit.ProblemTypeQuotaExceeded+`","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"slow down, GET","violated-policies":["default"]}`, r.Body)
	expect.Equal(t, int64(1), e.calls.Load())
}
