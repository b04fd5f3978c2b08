package core_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// captureStore records the last request a Limiter sent it.
type captureStore struct{ req core.TakeRequest }

func (s *captureStore) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	s.req = req
	return core.Decision{Allowed: true}, nil
}

// prepared returns the request a Limiter of alg and l sends its store, with
// the figures the Limiter computed once.
func prepared(t *testing.T, alg core.Algorithm, l core.Limit) core.TakeRequest {
	t.Helper()
	return preparedWith(t, alg, l)
}

// preparedWith is prepared with the Limiter's options.
func preparedWith(t *testing.T, alg core.Algorithm, l core.Limit, opts ...core.Option) core.TakeRequest {
	t.Helper()
	st := &captureStore{}
	lim, err := core.NewLimiter(st, alg, l, opts...)
	must.NoError(t, err)
	_, err = lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	return st.req
}

// AdvanceWord must leave exactly the state Decide leaves, for every cost,
// time and state, on requests built by a Limiter and by hand alike: the
// memory store swaps in the one and reports the decision of the other.
func TestAdvanceWordAgreesWithDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	limits := []core.Limit{core.PerSecond(10), core.PerMinute(7).WithBurst(3), core.Every(5, 30*time.Second).WithBurst(40), core.PerHour(1)}
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		for _, l := range limits {
			for _, req := range []core.TakeRequest{{Algorithm: alg, Limits: []core.Limit{l}}, prepared(t, alg, l)} {
				var st [1]core.State
				now := int64(1_700_000_000_000_000)
				for range 2000 {
					now += rng.Int64N(3 * l.Period.Microseconds() / l.Rate)
					req.Cost = rng.Int64N(l.EffectiveBurst() + 2)
					next := req.AdvanceWord(st[0].T, now)
					var d core.Decision
					must.NoError(t, req.Decide(&d, st[:], now))
					must.Equal(t, st[0].T, next, "%s %s cost %d at %d", alg, l, req.Cost, now)
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
		limits    []core.Limit
		cost, now int64
	}{
		"window algorithm": {core.FixedWindow, []core.Limit{l}, 1, t0},
		"unknown":          {core.Algorithm(200), []core.Limit{l}, 1, t0},
		"negative cost":    {core.GCRA, []core.Limit{l}, -1, t0},
		"peek":             {core.GCRA, []core.Limit{l}, 0, t0},
		"over capacity":    {core.GCRA, []core.Limit{l}, 11, t0},
		"negative time":    {core.GCRA, []core.Limit{l}, 1, -5},
		"time past max":    {core.GCRA, []core.Limit{l}, 1, core.MaxTime + 1},
		"invalid limit":    {core.GCRA, []core.Limit{{Rate: -1, Period: time.Second}}, 1, t0},
		"overflowing cost": {core.GCRA, []core.Limit{l}, math.MaxInt64, t0},
		"two limits":       {core.GCRA, []core.Limit{l, l}, 1, t0},
		"no limits":        {core.GCRA, nil, 1, t0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req := core.TakeRequest{Algorithm: c.alg, Limits: c.limits, Cost: c.cost}
			expect.Equal(t, int64(42), req.AdvanceWord(42, c.now))
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(alg core.Algorithm, ls ...core.Limit) uint64 {
		return (&core.TakeRequest{Algorithm: alg, Limits: ls}).Fingerprint()
	}
	base := core.PerSecond(10)
	expect.Equal(t, fp(core.GCRA, base), fp(core.GCRA, base.Named("api")), "names do not separate state")
	planned := prepared(t, core.GCRA, base)
	expect.Equal(t, fp(core.GCRA, base), planned.Fingerprint(), "the planned fingerprint matches")
	expect.Equal(t, fp(core.GCRA, base), fp(core.GCRA, base.WithBurst(10)), "burst 0 means Rate")
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
	changed.Limits = []core.Limit{core.PerSecond(20).WithBurst(10)}
	expect.Equal(t, fp(core.GCRA, changed.Limits...), changed.Fingerprint(), "changed limits are not read from the plan")
}
