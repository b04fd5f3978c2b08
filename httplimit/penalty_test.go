package httplimit

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestOutcomeBlockedIsListed(t *testing.T) {
	expect.Contains(t, Outcomes(), OutcomeBlocked)
	expect.Equal(t, "blocked", OutcomeBlocked.String())
}

// A key in its penalty box gets 429 with the block's end in Retry-After and
// the RateLimit field, whatever its limit says, and the observer hears
// OutcomeBlocked; in a dry run it goes on, reported as a dry-run denial.
func TestPenaltyBoxThroughThePolicy(t *testing.T) {
	for _, dry := range []bool{false, true} {
		rec := &recorder{}
		opts := []Option{WithObserver(rec), WithHeaders(IETFHeaders | XRateLimitHeaders)}
		if dry {
			opts = append(opts, WithDryRun())
		}
		st, err := memory.New(memory.WithSweepInterval(0))
		must.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		p, clk := newPolicy(t, st, core.FixedWindow, core.PerSecond(2), []core.Option{core.WithBlockFor(90 * time.Second)}, opts...)
		r := fakereq.New("192.0.2.1:1")
		for range 2 {
			_, _, next := serve(p, r)
			must.True(t, next)
		}
		w, _, next := serve(p, r)
		expect.Equal(t, dry, next, "only a dry run lets the request go on")
		if !dry {
			expect.Equal(t, "90", w.Header().Get(HeaderRetryAfter), "the block's length")
		}
		ev := rec.last()
		expect.True(t, ev.Decision.BlockStarted)
		expect.Equal(t, 90*time.Second, ev.Decision.RetryAfter)
		clk.Advance(30500 * time.Millisecond) // the limit alone would admit
		w, _, next = serve(p, r)
		ev = rec.last()
		if dry {
			expect.True(t, next)
			expect.Equal(t, OutcomeDryRunDenied, ev.Outcome)
			expect.Equal(t, "", w.Header().Get(HeaderRetryAfter))
			continue
		}
		expect.False(t, next)
		expect.Equal(t, OutcomeDenied, rec.events[len(rec.events)-2].Outcome, "the denial that starts the block")
		expect.Equal(t, OutcomeBlocked, ev.Outcome)
		expect.True(t, ev.Decision.Blocked)
		expect.Equal(t, 429, w.Code)
		expect.Equal(t, "60", w.Header().Get(HeaderRetryAfter), "59.5s left, rounded up")
		expect.Equal(t, "0", w.Header().Get(HeaderXRateLimitRemain))
		expect.Contains(t, w.Header().Get(HeaderRateLimit), ";r=0;t=60")
		clk.Advance(time.Minute)
		_, _, next = serve(p, r)
		expect.True(t, next, "the block has ended")
	}
}
