package redistest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RefundOnServerTime checks, for every algorithm, that a refund through a
// store on Redis's clock gives back what was admitted although the caller's
// clock is years off Redis's (and, standing still, measures a little less
// time between the calls than Redis does): the script places the admission
// by its age (TakeRequest.Now minus Admitted) on Redis's clock, not at the
// caller's instant. scriptCalls returns the EVALSHA and EVAL calls the server has run
// so far; a refund must be one of them.
func RefundOnServerTime(t *testing.T, newStore NewStore, scriptCalls func(t testing.TB) int64) {
	for _, alg := range core.Algorithms() {
		// The caller's clock stands still between the calls (it measures a
		// little less than Redis), or runs 50 ms ahead (a slow spend call).
		for _, elapsed := range []time.Duration{0, 50 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s/%s", alg, elapsed), func(t *testing.T) {
				refundSkewed(t, newStore, scriptCalls, alg, elapsed)
			})
		}
	}
}

func refundSkewed(t *testing.T, newStore NewStore, scriptCalls func(t testing.TB) int64, alg core.Algorithm, elapsed time.Duration) {
	skewed := core.NewManualClock(time.Date(2019, 7, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(newStore(t), alg, core.PerHour(3), core.WithClock(skewed))
	must.NoError(t, err)
	ctx := context.Background()
	var last core.Decision
	for i := range 3 {
		last, err = lim.Allow(ctx, "skewed")
		must.NoError(t, err)
		must.True(t, last.Allowed, "request %d", i)
	}
	skewed.Advance(elapsed)
	before := scriptCalls(t)
	d, err := lim.Refund(ctx, "skewed", 1, last)
	must.NoError(t, err)
	expect.Equal(t, int64(1), scriptCalls(t)-before, "a refund is one script call")
	expect.Equal(t, int64(1), d.Remaining, "one given back")
	d, err = lim.Allow(ctx, "skewed")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the refunded one is spent again")
	d, err = lim.Allow(ctx, "skewed")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "and no more")
}
