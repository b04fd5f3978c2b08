package httplimit

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// leakyGroup is a group of two leaky-bucket policies on one store and
// clock, keyed by the peer: "fast" lets one request leave a second, "slow"
// one every five seconds; both queue up to five.
func leakyGroup(t *testing.T) *Group {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(httpT0)
	var ps []*Policy
	for name, l := range map[string]core.Limit{
		"fast": core.PerSecond(1).WithBurst(5),
		"slow": core.Every(1, 5*time.Second).WithBurst(5),
	} {
		lim, err := core.NewLimiter(st, core.LeakyBucket, l.Named(name), core.WithClock(clk), core.WithNamespace(name))
		must.NoError(t, err)
		p, err := New(lim, WithKey(peerKey), WithMaxDelay(time.Minute))
		must.NoError(t, err)
		ps = append(ps, p)
	}
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	return g
}

// A group holds a request for the longest delay its policies ask: the
// second request of a peer waits 5 s (the slow policy's pace), not 1 s (the
// fast one's), and not 0. The hold is timed on synctest's clock, so the
// test takes no real time.
func TestGroupHoldsForTheLongestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := leakyGroup(t)
		var held []time.Duration
		for range 2 {
			start := time.Now()
			_, _, next := serveGroup(g, fakereq.New("192.0.2.7:1"))
			must.True(t, next)
			held = append(held, time.Since(start))
		}
		expect.Equal(t, []time.Duration{0, 5 * time.Second}, held)
	})
}
