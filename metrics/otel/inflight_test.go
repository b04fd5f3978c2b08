package otelmetrics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
)

// The instrument follows the slots each policy holds, per policy name.
func TestRegisterInFlight(t *testing.T) {
	st := newMemoryStore(t, 100)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100).Named("api"), core.WithInFlight(core.Concurrent(2)))
	require.NoError(t, err)
	p, err := httplimit.New(lim)
	require.NoError(t, err)
	mp, reader := newProvider(t)
	reg, err := otelmetrics.RegisterInFlight(mp, func() []*httplimit.Policy { return []*httplimit.Policy{p} })
	require.NoError(t, err)

	ctx := context.Background()
	s, _, err := lim.Acquire(ctx, "k")
	require.NoError(t, err)
	m := collect(t, reader, "ratewarden.inflight.slots")
	assert.Equal(t, "{slot}", m.Unit)
	assert.Equal(t, map[string]int64{key("api"): 1}, sums(t, m))
	require.NoError(t, s.Release(ctx))
	assert.Equal(t, map[string]int64{key("api"): 0}, sums(t, collect(t, reader, "ratewarden.inflight.slots")))
	assert.Equal(t, map[string]int64{key("api"): 0}, sums(t, collect(t, reader, "ratewarden.inflight.expired")))
	require.NoError(t, reg.Unregister())

	_, err = otelmetrics.RegisterInFlight(nil, func() []*httplimit.Policy { return nil })
	assert.True(t, errors.Is(err, otelmetrics.ErrInvalid))
	_, err = otelmetrics.RegisterInFlight(mp, nil)
	assert.True(t, errors.Is(err, otelmetrics.ErrInvalid))
}
