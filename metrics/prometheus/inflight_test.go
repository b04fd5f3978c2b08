package prommetrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
)

// The gauge follows the slots each policy holds, per policy name, and the
// refusals are decisions with their own outcome.
func TestRegisterInFlight(t *testing.T) {
	st := newMemoryStore(t, 100)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100).Named("api"), core.WithInFlight(core.Concurrent(2)))
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	require.NoError(t, err)
	p, err := httplimit.New(lim, httplimit.WithObserver(obs))
	require.NoError(t, err)
	_, err = prommetrics.RegisterInFlight(reg, func() []*httplimit.Policy { return []*httplimit.Policy{p} })
	require.NoError(t, err)

	gauge := func(n string) string {
		return `# HELP ratewarden_inflight_slots In-flight slots the policy holds on this instance: its requests running under its concurrency limit.
# TYPE ratewarden_inflight_slots gauge
ratewarden_inflight_slots{policy="api"} ` + n + "\n"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(gauge("0")), "ratewarden_inflight_slots"))
	ctx := context.Background()
	var held []core.Slot
	for range 3 {
		s, _, err := lim.Acquire(ctx, "k")
		require.NoError(t, err)
		held = append(held, s)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(gauge("2")), "ratewarden_inflight_slots"))
	for _, s := range held {
		require.NoError(t, s.Release(ctx))
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(gauge("0")), "ratewarden_inflight_slots"))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ratewarden_inflight_expired_total In-flight slots the policy lost on this instance because their lease expired while their request ran (the bound was not held).
# TYPE ratewarden_inflight_expired_total counter
ratewarden_inflight_expired_total{policy="api"} 0
`), "ratewarden_inflight_expired_total"))
	assert.Contains(t, httplimit.Outcomes(), httplimit.OutcomeInFlightRefused, "every outcome is a decisions series")

	_, err = prommetrics.RegisterInFlight(nil, func() []*httplimit.Policy { return nil })
	assert.True(t, errors.Is(err, prommetrics.ErrInvalid))
	_, err = prommetrics.RegisterInFlight(reg, nil)
	assert.True(t, errors.Is(err, prommetrics.ErrInvalid))
	_, err = prommetrics.RegisterInFlight(reg, func() []*httplimit.Policy { return nil })
	assert.Error(t, err, "registered twice")
}
