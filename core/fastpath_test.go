package core_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// prepared returns l as a Limiter prepares it (with its figures cached).
func prepared(t *testing.T, alg core.Algorithm, l core.Limit) core.Limit {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	lim, err := core.NewLimiter(st, alg, l)
	require.NoError(t, err)
	return lim.Limits()[0]
}

// AdvanceWord must leave exactly the state ApplyInto leaves, for every cost,
// time and state, on prepared and unprepared limits alike: the memory store
// swaps in the one and reports the decision of the other.
func TestAdvanceWordAgreesWithApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	limits := []core.Limit{core.PerSecond(10), core.PerMinute(7).WithBurst(3), core.Every(5, 30*time.Second).WithBurst(40), core.PerHour(1)}
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		for _, raw := range limits {
			for _, l := range []core.Limit{raw, prepared(t, alg, raw)} {
				var st core.State
				now := int64(1_700_000_000_000_000)
				for range 2000 {
					now += rng.Int64N(3 * l.Period.Microseconds() / l.Rate)
					cost := rng.Int64N(l.EffectiveBurst() + 2)
					next := alg.AdvanceWord(&l, st.T, cost, now)
					var d core.Decision
					require.NoError(t, alg.ApplyInto(&d, &st, &l, cost, now))
					require.Equal(t, st.T, next, "%s %s cost %d at %d", alg, l, cost, now)
				}
			}
		}
	}
}

func TestAdvanceWordLeavesInvalidRequestsAlone(t *testing.T) {
	l := core.PerSecond(10)
	const t0 = int64(1_700_000_000_000_000)
	cases := map[string]struct {
		alg       core.Algorithm
		l         core.Limit
		cost, now int64
	}{
		"window algorithm": {core.FixedWindow, l, 1, t0},
		"unknown":          {core.Algorithm(200), l, 1, t0},
		"negative cost":    {core.GCRA, l, -1, t0},
		"peek":             {core.GCRA, l, 0, t0},
		"over capacity":    {core.GCRA, l, 11, t0},
		"negative time":    {core.GCRA, l, 1, -5},
		"time past max":    {core.GCRA, l, 1, core.MaxTime + 1},
		"invalid limit":    {core.GCRA, core.Limit{Rate: -1, Period: time.Second}, 1, t0},
		"overflowing cost": {core.GCRA, l, math.MaxInt64, t0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, int64(42), c.alg.AdvanceWord(&c.l, 42, c.cost, c.now))
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(alg core.Algorithm, ls ...core.Limit) uint64 {
		return (&core.TakeRequest{Algorithm: alg, Limits: ls}).Fingerprint()
	}
	base := core.PerSecond(10)
	assert.Equal(t, fp(core.GCRA, base), fp(core.GCRA, base.Named("api")), "names do not separate state")
	assert.Equal(t, fp(core.GCRA, base), fp(core.GCRA, prepared(t, core.GCRA, base)), "the cached part matches")
	assert.Equal(t, fp(core.GCRA, base), fp(core.GCRA, base.WithBurst(10)), "burst 0 means Rate")
	seen := map[uint64]string{}
	for _, alg := range core.Algorithms() {
		for name, ls := range map[string][]core.Limit{
			"10/s":         {base},
			"11/s":         {core.PerSecond(11)},
			"10/m":         {core.PerMinute(10)},
			"10/s b20":     {base.WithBurst(20)},
			"10/s+100/h":   {base, core.PerHour(100)},
			"100/h+10/s":   {core.PerHour(100), base},
			"10/s+10/s":    {base, base},
			"10/s+100/h+1": {base, core.PerHour(100), core.PerHour(1)},
		} {
			f := fp(alg, ls...)
			id := alg.String() + " " + name
			if other, dup := seen[f]; dup {
				t.Errorf("%s and %s share a fingerprint", id, other)
			}
			seen[f] = id
		}
	}
	changed := prepared(t, core.GCRA, base)
	changed.Rate = 20
	assert.Equal(t, fp(core.GCRA, core.PerSecond(20).WithBurst(10)), fp(core.GCRA, changed), "a changed limit is not read from its stale cache")
}
