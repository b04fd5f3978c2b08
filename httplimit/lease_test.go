package httplimit

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// A policy whose limiters lease tokens admits exactly each tier's limit,
// deciding most requests with no store call, reports its leases summed over
// its tiers (per policy, never per key), and gives back what it holds.
func TestPolicyTokenLease(t *testing.T) {
	st := storetest.NewReference()
	tl := core.TokenLease{Max: 20, TTL: time.Second}
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerHour(100), core.WithTokenLease(tl))
	must.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerHour(300))
	must.NoError(t, err)
	plan, err := keyfuncs.Header("X-Plan")
	must.NoError(t, err)
	p, err := New(lim, WithKey(peerKey), WithTiers(plan, paid))
	must.NoError(t, err)
	admitted := map[string]int{}
	for _, tier := range []string{"", "paid"} {
		for range 1000 {
			r := fakereq.New("192.0.2.1:1", "X-Plan", tier)
			if pass, ok := p.Handle(context.Background(), r, httptest.NewRecorder()); ok {
				admitted[tier]++
				pass.Finish(200)
			}
		}
	}
	expect.Equal(t, map[string]int{"": 100, "paid": 300}, admitted)
	s := p.TokenLeaseStats()
	expect.Equal(t, int64(2000), s.Decisions, "both tiers' decisions")
	expect.True(t, s.Calls*4 < s.Decisions, s)
	expect.True(t, s.Leased >= 400-2*20, s)
	must.NoError(t, p.ReturnLeasedTokens(context.Background()))

	plainLim, err := core.NewLimiter(st, core.GCRA, core.PerHour(100))
	must.NoError(t, err)
	plain, err := New(plainLim)
	must.NoError(t, err)
	expect.Equal(t, core.TokenLeaseStats{}, plain.TokenLeaseStats())
	expect.NoError(t, plain.ReturnLeasedTokens(context.Background()))
}
