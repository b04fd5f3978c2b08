package observerkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// leasingPolicy is a policy named name whose limiter leases up to max tokens
// of a hot key from st (0 tokens: no lease).
func leasingPolicy(t *testing.T, st core.Store, name string, max int64) *httplimit.Policy {
	t.Helper()
	opts := []core.Option{core.WithNamespace(name)}
	if max > 0 {
		opts = append(opts, core.WithTokenLease(core.TokenLease{Max: max, TTL: time.Hour}))
	}
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerHour(100000).Named(name), opts...)
	must.NoError(t, err)
	p, err := httplimit.New(lim)
	must.NoError(t, err)
	return p
}

// spend decides n requests of one hot key under p.
func spend(t *testing.T, p *httplimit.Policy, n int) {
	t.Helper()
	for range n {
		d, err := p.Limiter().Allow(context.Background(), "hot")
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
}

func TestLeaseTotals(t *testing.T) {
	st := storetest.NewReference()
	a, b, plain := leasingPolicy(t, st, "a", 20), leasingPolicy(t, st, "b", 20), leasingPolicy(t, st, "plain", 0)
	spend(t, a, 200)
	spend(t, b, 10)
	spend(t, plain, 5)
	totals, err := observerkit.NewLeaseTotals(10)
	must.NoError(t, err)
	got := totals.ByPolicy([]*httplimit.Policy{b, nil, plain, a, a})
	must.Equal(t, 2, len(got), "the policy that leases nothing has no series")
	expect.Equal(t, "a", got[0].Policy)
	expect.Equal(t, a.TokenLeaseStats(), got[0].TokenLeaseStats, "a policy listed twice is read once")
	expect.Equal(t, int64(200), got[0].Decisions)
	expect.True(t, got[0].Leased > 0, "the hot key leased")
	expect.True(t, got[0].Local > 0 && got[0].Calls < 200, "decided mostly without a store call")
	expect.Equal(t, "b", got[1].Policy)
	expect.Equal(t, int64(10), got[1].Decisions)

	_, err = observerkit.NewLeaseTotals(0)
	expect.Error(t, err)
}

// A policy dropped from the list (a reload) keeps its counts in its name's
// total, including the tokens it gives back after it left; the totals never
// decrease, and the new policy of the same name adds to them.
func TestLeaseTotalsAcrossReplacement(t *testing.T) {
	st := storetest.NewReference()
	old := leasingPolicy(t, st, "api", 20)
	spend(t, old, 200)
	totals, err := observerkit.NewLeaseTotals(10)
	must.NoError(t, err)
	before := totals.ByPolicy([]*httplimit.Policy{old})
	must.Equal(t, 1, len(before))
	must.Equal(t, int64(0), before[0].Returned)

	next := leasingPolicy(t, st, "api", 20)
	spend(t, next, 3)
	must.NoError(t, old.ReturnLeasedTokens(context.Background()))
	must.NoError(t, next.ReturnLeasedTokens(context.Background()), "waits for its refreshes on their way")
	must.True(t, old.TokenLeaseStats().Returned > 0, "the old policy held unspent tokens")
	returned := old.TokenLeaseStats().Returned + next.TokenLeaseStats().Returned
	for range 3 {
		got := totals.ByPolicy([]*httplimit.Policy{next})
		must.Equal(t, 1, len(got))
		expect.Equal(t, int64(203), got[0].Decisions, "the old policy's decisions stay counted")
		expect.Equal(t, returned, got[0].Returned, "the give-back after the swap is counted")
		expect.Equal(t, old.TokenLeaseStats().Leased+next.TokenLeaseStats().Leased, got[0].Leased)
	}
}

// Names beyond the bound share OverflowPolicy, and a name keeps the series
// it was given first, whatever the order of later lists.
func TestLeaseTotalsBound(t *testing.T) {
	st := storetest.NewReference()
	a, b, c := leasingPolicy(t, st, "a", 5), leasingPolicy(t, st, "b", 5), leasingPolicy(t, st, "c", 5)
	spend(t, a, 1)
	spend(t, b, 2)
	spend(t, c, 4)
	totals, err := observerkit.NewLeaseTotals(1)
	must.NoError(t, err)
	names := func(got []observerkit.PolicyLeases) map[string]int64 {
		out := map[string]int64{}
		for _, g := range got {
			out[g.Policy] = g.Decisions
		}
		return out
	}
	expect.Equal(t, map[string]int64{"b": 2, observerkit.OverflowPolicy: 5}, names(totals.ByPolicy([]*httplimit.Policy{b, a, c})))
	expect.Equal(t, map[string]int64{"b": 2, observerkit.OverflowPolicy: 5}, names(totals.ByPolicy([]*httplimit.Policy{c, a, b})))
}
