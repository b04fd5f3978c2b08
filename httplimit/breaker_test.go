package httplimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// outageStore is a real memory store that can be taken down (every call
// then fails with errOutage), counting the calls that reach it. Unlike the
// memory store it is not Local, so the policy times it as a network store.
type outageStore struct {
	next  core.Store
	down  atomic.Bool
	calls atomic.Int64
	clk   *core.ManualClock
	step  time.Duration // how far each call moves clk: its latency on the limiter's clock
}

var errOutage = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func (s *outageStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	s.calls.Add(1)
	if s.step > 0 {
		s.clk.Advance(s.step)
	}
	if s.down.Load() {
		return core.Decision{}, errOutage
	}
	return s.next.Take(ctx, req)
}

// outagePolicy is a policy of 3/m (fixed window) on an outageStore, on a
// manual clock, with a breaker of 5 failures, 4 s then 8 s, no jitter.
func outagePolicy(t *testing.T, opts ...Option) (*Policy, *outageStore, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(httpT0)
	mem, err := memory.New(memory.WithClock(clk), memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = mem.Close() })
	st := &outageStore{next: mem, clk: clk}
	b := core.BreakerConfig{Failures: 5, MinOpen: 4 * time.Second, MaxOpen: 8 * time.Second}
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(3), core.WithClock(clk), core.WithBreaker(b))
	must.NoError(t, err)
	p, err := New(lim, append([]Option{WithKey(peerKey)}, opts...)...)
	must.NoError(t, err)
	p.logs.now = clk.Now
	return p, st, clk
}

// Failing open: five failures open the breaker, which then answers at once
// without asking the store; a probe after the interval finds the store back,
// and the limiter is exact again. Observers hear breaker_open; the log says
// when it opens and closes, with an observer set.
func TestBreakerFailsOpenAtOnceAndCloses(t *testing.T) {
	logger, buf := logBuffer()
	rec := &recorder{}
	p, st, clk := outagePolicy(t, WithObserver(rec), WithLogger(logger))
	st.down.Store(true)
	for i := range 20 {
		w, _, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next, "request %d", i)
		must.Equal(t, 200, w.Code)
		expect.Empty(t, w.Header().Get(HeaderRetryAfter))
	}
	expect.Equal(t, int64(5), st.calls.Load(), "the store is not asked once the breaker is open")
	outs := rec.outcomes()
	expect.Equal(t, []Outcome{OutcomeFailedOpen, OutcomeFailedOpen, OutcomeFailedOpen, OutcomeFailedOpen, OutcomeFailedOpen}, outs[:5])
	for _, oc := range outs[5:] {
		must.Equal(t, OutcomeBreakerOpen, oc)
	}
	e := rec.last()
	expect.ErrorIs(t, e.Err, core.ErrBreakerOpen)
	expect.Zero(t, e.StoreLatency, "no store call, no latency")
	expect.Equal(t, "default", e.Policy)
	got := lines(buf)
	must.Len(t, got, 2, "one store error line, one opening line: the rest are throttled or not logged")
	expect.Contains(t, got[0], `msg="ratewarden: rate limiter failed; requests pass unlimited (fail open)" policy=default err="dial tcp 10.0.0.7:6379: connection refused"`)
	expect.Contains(t, got[1], `msg="ratewarden: the store failed repeatedly; its circuit breaker is open: requests pass unlimited (fail open) at once`)

	// The store is back; until the interval ends nobody knows.
	st.down.Store(false)
	clk.Advance(4*time.Second - time.Millisecond)
	serve(p, fakereq.New("192.0.2.1:1"))
	expect.Equal(t, int64(5), st.calls.Load())
	clk.Advance(time.Millisecond)
	var codes []int
	for range 4 {
		w, _, _ := serve(p, fakereq.New("192.0.2.1:1"))
		codes = append(codes, w.Code)
	}
	expect.Equal(t, []int{200, 200, 200, 429}, codes, "exact again from the probe on")
	expect.Equal(t, int64(9), st.calls.Load())
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeAllowed, OutcomeDenied}, rec.outcomes()[len(rec.outcomes())-4:])
	got = lines(buf)
	must.Len(t, got, 3)
	expect.Contains(t, got[2], `msg="ratewarden: the store answers again; its circuit breaker is closed and the limiter decides exactly" policy=default`)
}

// Failing closed: the open breaker's 503 says, in Retry-After, when the
// next probe is due, rounded up to whole seconds, in the policy's usual
// body (text, JSON, none to HEAD).
func TestBreakerFailsClosedWithTheTimeToTheProbe(t *testing.T) {
	p, st, clk := outagePolicy(t, WithFailClosed(), WithUnavailableRetryAfter(30*time.Second))
	st.down.Store(true)
	for range 5 {
		w, _, _ := serve(p, fakereq.New("192.0.2.1:1"))
		must.Equal(t, 503, w.Code)
		must.Equal(t, "30", w.Header().Get(HeaderRetryAfter), "a store failure: the policy's own Retry-After")
	}
	for _, tc := range []struct {
		advance time.Duration
		want    string
	}{{0, "4"}, {time.Millisecond, "4"}, {999 * time.Millisecond, "3"}, {2999 * time.Millisecond, "1"}} {
		clk.Advance(tc.advance)
		w, _, next := serve(p, fakereq.New("192.0.2.1:1", "Accept", "application/json"))
		expect.False(t, next)
		expect.Equal(t, 503, w.Code)
		expect.Equal(t, tc.want, w.Header().Get(HeaderRetryAfter))
		expect.Equal(t, ContentTypeProblemJSON, w.Header().Get("Content-Type"))
		expect.JSONEq(t, string(UnavailableProblem().JSON()), w.Body.String())
	}
	head := fakereq.New("192.0.2.1:1")
	head.MethodName = "HEAD"
	w, _, _ := serve(p, head)
	expect.Equal(t, 503, w.Code)
	expect.Equal(t, "1", w.Header().Get(HeaderRetryAfter))
	expect.Empty(t, w.Body.String())
	w, _, _ = serve(p, fakereq.New("192.0.2.1:1"))
	expect.Equal(t, string(UnavailableProblem().Text()), w.Body.String())
	expect.Equal(t, int64(5), st.calls.Load())

	// The probe fails: the next interval is 8 s.
	clk.Advance(time.Millisecond)
	w, _, _ = serve(p, fakereq.New("192.0.2.1:1"))
	expect.Equal(t, "30", w.Header().Get(HeaderRetryAfter), "the probe's own failure")
	w, _, _ = serve(p, fakereq.New("192.0.2.1:1"))
	expect.Equal(t, "8", w.Header().Get(HeaderRetryAfter))
	expect.Equal(t, int64(6), st.calls.Load())
}

// A dry run lets the open breaker's requests through, as it does every
// failure.
func TestBreakerInADryRunPasses(t *testing.T) {
	rec := &recorder{}
	p, st, _ := outagePolicy(t, WithFailClosed(), WithDryRun(), WithObserver(rec))
	st.down.Store(true)
	for range 8 {
		w, _, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
		must.Equal(t, 200, w.Code)
	}
	expect.Equal(t, OutcomeBreakerOpen, rec.last().Outcome)
}

// WithoutStoreErrorLog silences the breaker's lines too; observers still
// hear every request.
func TestBreakerLinesFollowWithoutStoreErrorLog(t *testing.T) {
	logger, buf := logBuffer()
	rec := &recorder{}
	p, st, _ := outagePolicy(t, WithObserver(rec), WithLogger(logger), WithoutStoreErrorLog())
	st.down.Store(true)
	for range 8 {
		serve(p, fakereq.New("192.0.2.1:1"))
	}
	expect.Empty(t, lines(buf))
	expect.Len(t, rec.outcomes(), 8)
}

// The store latency reported on allowed, denied and dry-run denied
// decisions is the store call's, never 0 (the store here moves the manual
// clock, as a slow network would; latency is timed on the monotonic clock).
func TestStoreLatencyIsReportedOnDecisions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want []Outcome
	}{
		{"enforced", nil, []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeAllowed, OutcomeDenied}},
		{"dry run", []Option{WithDryRun()}, []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeAllowed, OutcomeDryRunDenied}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p, st, _ := outagePolicy(t, append([]Option{WithObserver(rec)}, tc.opts...)...)
			st.step = 3 * time.Millisecond
			for range 4 {
				serve(p, fakereq.New("192.0.2.1:1"))
			}
			must.Equal(t, tc.want, rec.outcomes())
			for i, e := range rec.events {
				expect.Positive(t, e.StoreLatency, "event %d (%s)", i, e.Outcome)
			}
		})
	}
}
