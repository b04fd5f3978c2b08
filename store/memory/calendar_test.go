package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A calendar quota's state is swept once its calendar window has ended (its
// month, here 6 hours after it was spent in), not a nominal 30 days later,
// and never before: until then it still counts.
func TestCalendarStateSweptAtTheBoundary(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	must.NoError(t, err)
	spent := time.Date(2026, 1, 31, 18, 0, 0, 0, ny)
	boundary := time.Date(2026, 2, 1, 0, 0, 0, 0, ny)
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			clk := core.NewManualClock(spent)
			st, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
			must.NoError(t, err)
			defer st.Close()
			lim, err := core.NewLimiter(st, alg, core.Monthly(1).In("America/New_York"), core.WithClock(clk))
			must.NoError(t, err)
			ctx := context.Background()
			d, err := lim.Allow(ctx, "a")
			must.NoError(t, err)
			must.True(t, d.Allowed)
			clk.Set(boundary.Add(-time.Second))
			_, err = lim.Allow(ctx, "b") // the sweep's now follows the requests
			must.NoError(t, err)
			st.Sweep()
			must.Equal(t, 2, st.Len(), "a's month has not ended")
			d, err = lim.Allow(ctx, "a")
			must.NoError(t, err)
			must.False(t, d.Allowed, "a still counts")
			wait := time.Second // the fixed window: a fresh month
			if alg == core.SlidingWindow {
				wait += 28 * 24 * time.Hour // January's count weighs on all of February
			}
			must.Equal(t, wait, d.RetryAfter)

			// The sliding window counts January in February: its state lives
			// until February ends.
			next := boundary
			if alg == core.SlidingWindow {
				next = time.Date(2026, 3, 1, 0, 0, 0, 0, ny)
			}
			clk.Set(next)
			_, err = lim.Allow(ctx, "c")
			must.NoError(t, err)
			st.Sweep()
			must.Equal(t, 1, st.Len(), "a and b are swept when their windows end; c stays")
		})
	}
}
