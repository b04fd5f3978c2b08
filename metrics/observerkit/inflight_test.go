package observerkit_test

import (
	"context"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
	"github.com/ratewarden/ratewarden/store/memory"
)

func inflightPolicy(t *testing.T, st core.Store, name string, n int64) *httplimit.Policy {
	t.Helper()
	opts := []core.Option{core.WithNamespace(name)}
	if n > 0 {
		opts = append(opts, core.WithInFlight(core.Concurrent(n)))
	}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100).Named(name), opts...)
	must.NoError(t, err)
	p, err := httplimit.New(lim)
	must.NoError(t, err)
	return p
}

func TestSlotsByPolicy(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	defer st.Close()
	a, b, c, plain := inflightPolicy(t, st, "a", 5), inflightPolicy(t, st, "b", 5), inflightPolicy(t, st, "c", 5), inflightPolicy(t, st, "plain", 0)
	ctx := context.Background()
	for _, p := range []*httplimit.Policy{a, a, b, c} {
		_, d, err := p.Limiter().Acquire(ctx, "k")
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
	expect.Equal(t, []observerkit.PolicySlots{{"a", 2, 0}, {"b", 1, 0}, {"c", 1, 0}}, observerkit.SlotsByPolicy([]*httplimit.Policy{c, plain, nil, b, a}, 10))
	expect.Equal(t, []observerkit.PolicySlots{{"a", 2, 0}, {observerkit.OverflowPolicy, 2, 0}}, observerkit.SlotsByPolicy([]*httplimit.Policy{a, b, c}, 1))
	expect.Empty(t, observerkit.SlotsByPolicy(nil, 10))
}
