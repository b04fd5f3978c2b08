package otelmetrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
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

// spend decides n requests of one hot key under p, then waits for its
// lease calls on their way and gives its unspent tokens back.
func spend(t *testing.T, p *httplimit.Policy, n int) {
	t.Helper()
	for range n {
		d, err := p.Limiter().Allow(context.Background(), "hot")
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	require.NoError(t, p.ReturnLeasedTokens(context.Background()))
}

// The instruments follow each policy's TokenLeaseStats, per policy name,
// and never decrease when a reload replaces a policy.
func TestRegisterTokenLeases(t *testing.T) {
	st := storetest.NewReference()
	old := leasingPolicy(t, st, "api")
	var current atomic.Pointer[httplimit.Policy]
	current.Store(old)
	mp, reader := newProvider(t)
	reg, err := otelmetrics.RegisterTokenLeases(mp, func() []*httplimit.Policy { return []*httplimit.Policy{current.Load()} },
		otelmetrics.WithAttributes(attribute.String("store", "redis")))
	require.NoError(t, err)
	spend(t, old, 300)
	s := old.TokenLeaseStats()
	require.Positive(t, s.Leased)
	require.Positive(t, s.Returned)
	want := func(s core.TokenLeaseStats) map[string]int64 {
		return map[string]int64{"decisions": s.Decisions, "local_decisions": s.Local, "store_calls": s.Calls,
			"refreshes": s.Refreshes, "leased_tokens": s.Leased, "returned_tokens": s.Returned, "failures": s.Failures}
	}
	apiSet := attribute.NewSet(attribute.String("store", "redis"), otelmetrics.AttrPolicy.String("api"))
	api := apiSet.Encoded(attribute.DefaultEncoder())
	check := func(s core.TokenLeaseStats) {
		t.Helper()
		for name, v := range want(s) {
			m := collect(t, reader, "ratewarden.token_lease."+name)
			assert.Equal(t, map[string]int64{api: v}, sums(t, m), name)
		}
	}
	check(s)
	assert.Equal(t, "{token}", collect(t, reader, "ratewarden.token_lease.leased_tokens").Unit)
	assert.Equal(t, "{call}", collect(t, reader, "ratewarden.token_lease.store_calls").Unit)

	next := leasingPolicy(t, st, "api")
	current.Store(next)
	spend(t, next, 9)
	n := next.TokenLeaseStats()
	sum := core.TokenLeaseStats{Decisions: s.Decisions + n.Decisions, Local: s.Local + n.Local, Calls: s.Calls + n.Calls,
		Refreshes: s.Refreshes + n.Refreshes, Leased: s.Leased + n.Leased, Returned: s.Returned + n.Returned, Failures: s.Failures + n.Failures}
	for range 2 {
		check(sum)
	}
	require.NoError(t, reg.Unregister())
}

func TestRegisterTokenLeasesRefusesBadInput(t *testing.T) {
	mp, _ := newProvider(t)
	none := func() []*httplimit.Policy { return nil }
	tests := []struct {
		name     string
		mp       bool
		policies func() []*httplimit.Policy
		opts     []otelmetrics.Option
	}{
		{"nil meter provider", false, none, nil},
		{"nil policies", true, nil, nil},
		{"max policies 0", true, none, []otelmetrics.Option{otelmetrics.WithMaxPolicies(0)}},
		{"nil option", true, none, []otelmetrics.Option{nil}},
		{"policy attribute", true, none, []otelmetrics.Option{otelmetrics.WithAttributes(otelmetrics.AttrPolicy.String("x"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.mp {
				_, err = otelmetrics.RegisterTokenLeases(mp, tt.policies, tt.opts...)
			} else {
				_, err = otelmetrics.RegisterTokenLeases(nil, tt.policies, tt.opts...)
			}
			assert.True(t, errors.Is(err, otelmetrics.ErrInvalid), "got %v", err)
		})
	}
}
