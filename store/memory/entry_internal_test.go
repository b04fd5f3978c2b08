package memory

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A reader that found a key's entry before it was killed and handed to
// another key must not decide on it: decideHeld tells it by tag. (Under two
// limits, as windows under one limit keep no entry.)
func TestRecycledEntryRefusesStaleReader(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(alg.String(), func(t *testing.T) {
			st, err := New(WithShards(1), WithSweepInterval(0))
			must.NoError(t, err)
			defer func() { must.NoError(t, st.Close()) }()
			ctx := context.Background()
			now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
			x := core.TakeRequest{Key: "x", Algorithm: alg, Limits: []core.Limit{core.PerMinute(3), core.PerHour(100)}, Cost: 1, Now: now}
			y := x
			y.Key = "y"
			_, err = st.Take(ctx, x)
			must.NoError(t, err)
			sh := &st.shards[0]
			tagX, tagY := st.tag(&x), st.tag(&y)
			slot, ok := sh.entries.find(tagX)
			must.True(t, ok)
			stale := slot.val.Load()

			must.NoError(t, st.Reset(ctx, x))
			_, err = st.Take(ctx, y)
			must.NoError(t, err)
			slot, ok = sh.entries.find(tagY)
			must.True(t, ok)
			must.Same(t, stale, slot.val.Load(), "y took x's recycled entry")

			var d core.Decision
			held, err := stale.decideHeld(&d, tagX, &x, core.Micros(now))
			must.NoError(t, err)
			expect.False(t, held, "a stale reader of x is turned away")
			held, err = stale.decideHeld(&d, tagY, &y, core.Micros(now))
			must.NoError(t, err)
			expect.True(t, held)
			expect.Equal(t, int64(1), d.Remaining, "y's own count: two spent")
		})
	}
}
