package prommetrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// leasingPolicy is a policy named name on st whose limiter leases up to 20
// tokens of a hot key.
func leasingPolicy(t *testing.T, st core.Store, name string) *httplimit.Policy {
	t.Helper()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerHour(100000).Named(name), core.WithNamespace(name),
		core.WithTokenLease(core.TokenLease{Max: 20, TTL: time.Hour}))
	require.NoError(t, err)
	p, err := httplimit.New(lim)
	require.NoError(t, err)
	return p
}

// spend decides n requests of one hot key under p.
func spend(t *testing.T, p *httplimit.Policy, n int) {
	t.Helper()
	for range n {
		d, err := p.Limiter().Allow(context.Background(), "hot")
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
}

// leaseText is the exposition of the token-lease counters of one policy
// with stats s.
func leaseText(policy string, s core.TokenLeaseStats) string {
	var b strings.Builder
	for _, row := range []struct {
		name string
		v    int64
	}{
		{"decisions_total", s.Decisions}, {"failures_total", s.Failures}, {"leased_tokens_total", s.Leased},
		{"local_decisions_total", s.Local}, {"refreshes_total", s.Refreshes},
		{"returned_tokens_total", s.Returned}, {"store_calls_total", s.Calls},
	} {
		fmt.Fprintf(&b, "# TYPE ratewarden_token_lease_%s counter\nratewarden_token_lease_%s{policy=%q} %d\n", row.name, row.name, policy, row.v)
	}
	return b.String()
}

// gatherLeases returns the token-lease counters of reg without their help
// texts, in the exposition format.
func gatherLeases(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "ratewarden_token_lease_") {
			continue
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", f.GetName(), strings.ToLower(f.GetType().String()))
		for _, m := range f.GetMetric() {
			fmt.Fprintf(&b, "%s{policy=%q} %d\n", f.GetName(), m.GetLabel()[0].GetValue(), int64(m.GetCounter().GetValue()))
		}
	}
	return b.String()
}

// The counters follow each policy's TokenLeaseStats, per policy name, and
// never decrease when a reload replaces a policy: the old policy's counts,
// and the tokens it gives back after it left, stay under its name.
func TestRegisterTokenLeases(t *testing.T) {
	st := storetest.NewReference()
	old := leasingPolicy(t, st, "api")
	var current atomic.Pointer[httplimit.Policy]
	current.Store(old)
	reg := prometheus.NewRegistry()
	_, err := prommetrics.RegisterTokenLeases(reg, func() []*httplimit.Policy { return []*httplimit.Policy{current.Load()} })
	require.NoError(t, err)
	assert.Equal(t, leaseText("api", core.TokenLeaseStats{}), gatherLeases(t, reg), "a leasing policy is exported from the start")

	spend(t, old, 300)
	require.NoError(t, old.ReturnLeasedTokens(context.Background()), "waits for the refreshes on their way")
	s := old.TokenLeaseStats()
	require.Equal(t, int64(300), s.Decisions)
	require.Positive(t, s.Leased, "the hot key leased")
	require.Less(t, s.Calls, int64(100), "most decisions asked no store")
	assert.Equal(t, leaseText("api", s), gatherLeases(t, reg))

	spend(t, old, 100)
	next := leasingPolicy(t, st, "api")
	current.Store(next)
	gatherLeases(t, reg) // the old policy is read once more after it left
	require.NoError(t, old.ReturnLeasedTokens(context.Background()))
	spend(t, next, 7)
	require.NoError(t, next.ReturnLeasedTokens(context.Background()))
	gone, now := old.TokenLeaseStats(), next.TokenLeaseStats()
	require.Greater(t, gone.Returned, s.Returned, "the replaced policy gave tokens back after it left")
	sum := core.TokenLeaseStats{Decisions: gone.Decisions + now.Decisions, Local: gone.Local + now.Local,
		Calls: gone.Calls + now.Calls, Refreshes: gone.Refreshes + now.Refreshes, Leased: gone.Leased + now.Leased,
		Returned: gone.Returned + now.Returned, Failures: gone.Failures + now.Failures}
	for range 3 {
		assert.Equal(t, leaseText("api", sum), gatherLeases(t, reg), "the replaced policy's counts stay")
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ratewarden_token_lease_returned_tokens_total Unspent leased tokens the policy gave back to the store on this instance.
# TYPE ratewarden_token_lease_returned_tokens_total counter
`+fmt.Sprintf("ratewarden_token_lease_returned_tokens_total{policy=\"api\"} %d\n", sum.Returned)), "ratewarden_token_lease_returned_tokens_total"))
}

// Policies that lease nothing have no series; names past WithMaxPolicies
// share OverflowPolicy; WithNamespace and WithConstLabels apply.
func TestRegisterTokenLeasesOptions(t *testing.T) {
	st := storetest.NewReference()
	a, b := leasingPolicy(t, st, "a"), leasingPolicy(t, st, "b")
	plainLim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10).Named("plain"))
	require.NoError(t, err)
	plain, err := httplimit.New(plainLim)
	require.NoError(t, err)
	spend(t, a, 3)
	spend(t, b, 4)
	reg := prometheus.NewRegistry()
	_, err = prommetrics.RegisterTokenLeases(reg, func() []*httplimit.Policy { return []*httplimit.Policy{a, plain, nil, b} },
		prommetrics.WithMaxPolicies(1), prommetrics.WithNamespace("app"), prommetrics.WithConstLabels(prometheus.Labels{"store": "redis"}))
	require.NoError(t, err)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP app_token_lease_decisions_total Decisions of a positive cost by the policy's token-leasing limiters on this instance.
# TYPE app_token_lease_decisions_total counter
app_token_lease_decisions_total{policy="a",store="redis"} 3
app_token_lease_decisions_total{policy="other",store="redis"} 4
`), "app_token_lease_decisions_total"))
}

func TestRegisterTokenLeasesRefusesBadInput(t *testing.T) {
	none := func() []*httplimit.Policy { return nil }
	reg := prometheus.NewRegistry()
	tests := []struct {
		name     string
		reg      prometheus.Registerer
		policies func() []*httplimit.Policy
		opts     []prommetrics.Option
	}{
		{"nil registerer", nil, none, nil},
		{"nil policies", reg, nil, nil},
		{"max policies 0", reg, none, []prommetrics.Option{prommetrics.WithMaxPolicies(0)}},
		{"bad namespace", reg, none, []prommetrics.Option{prommetrics.WithNamespace("1x")}},
		{"const label policy", reg, none, []prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"policy": "x"})}},
		{"nil option", reg, none, []prommetrics.Option{nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prommetrics.RegisterTokenLeases(tt.reg, tt.policies, tt.opts...)
			assert.True(t, errors.Is(err, prommetrics.ErrInvalid), "got %v", err)
		})
	}
	_, err := prommetrics.RegisterTokenLeases(reg, none)
	require.NoError(t, err)
	_, err = prommetrics.RegisterTokenLeases(reg, none)
	assert.Error(t, err, "registered twice")
	assert.False(t, errors.Is(err, prommetrics.ErrInvalid))
}
