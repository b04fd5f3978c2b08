package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// A dry run denies nothing: a would-be denial goes on with the truthful
// headers but no Retry-After, and the observer hears of it.
func TestDryRunDeniesNothingAndTellsTheTruth(t *testing.T) {
	rec := &recorder{}
	p, clk := memPolicy(t, core.FixedWindow, core.PerMinute(2), WithDryRun(), WithObserver(rec), WithDecisionInContext())
	for range 2 {
		_, _, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
	}
	clk.Advance(15 * time.Second)
	w, pass, next := serve(p, fakereq.New("192.0.2.1:1"))
	must.True(t, next, "a dry run passes the request")
	expect.Equal(t, http.Header{
		"X-Ratelimit-Limit":     {"2"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {"45"},
		"Ratelimit-Policy":      {`"default";q=2;w=60`},
		"Ratelimit":             {`"default";r=0;t=45`},
	}, w.Header())
	expect.Equal(t, OutcomeDryRunDenied, rec.last().Outcome)
	d, ok := DecisionFromContext(pass.Context())
	expect.True(t, ok)
	expect.False(t, d.Allowed, "the handler can see what would have happened")
}

// Under a dry run a leaky-bucket request is not held, WithMaxDelay denies
// nothing, and a request without a key goes on.
func TestDryRunHoldsNothing(t *testing.T) {
	rec := &recorder{}
	p, _ := memPolicy(t, core.LeakyBucket, core.PerHour(1).WithBurst(5), WithDryRun(), WithObserver(rec), WithMaxDelay(time.Minute))
	began := time.Now()
	for range 3 {
		_, _, next := serve(p, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
	}
	expect.Less(t, time.Since(began), time.Second, "no request was held for its hour")
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeDryRunDenied, OutcomeDryRunDenied}, rec.outcomes(), "held over the maximum would be denied")

	noKey := WithKey(func(keyfuncs.Request) (string, error) { return "", keyfuncs.ErrKey })
	p, _ = memPolicy(t, core.GCRA, core.PerMinute(1), WithDryRun(), noKey)
	w, _, next := serve(p, fakereq.New("192.0.2.1:1"))
	expect.True(t, next)
	expect.Equal(t, 200, w.Code)
}
