package redisstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// TestCrossCheckExtremes compares the scripts with core, decision by decision,
// on limits the conformance suite does not use: microsecond periods, uneven
// intervals, the longest period, large bursts, costs that need the sliding
// log's chunked RPUSH, times near core.MaxTime, and up to four limits.
func TestCrossCheckExtremes(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	pool := []core.Limit{
		core.Every(1, time.Microsecond),
		core.Every(3, 7*time.Microsecond),
		core.Every(7, 1500*time.Microsecond).WithBurst(20),
		core.Every(2500, time.Second),
		core.Every(9, 61*time.Second).WithBurst(2),
		{Rate: 5, Period: core.MaxPeriod, Burst: 5},
		core.Every(1000, 999_983*time.Microsecond).WithBurst(3000),
	}
	starts := []time.Time{storetest.Start, time.UnixMicro(core.MaxTime - int64(48*time.Hour/time.Microsecond)), time.UnixMicro(1)}
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, client, luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour), luascript.WithLocalCache(0))
			ref := storetest.NewReference()
			rng := rand.New(rand.NewPCG(uint64(alg), 42))
			for seq := range 12 {
				limits := randomLimits(rng, alg, pool)
				now := starts[seq%len(starts)]
				period := limits[0].Period
				for i := range 60 {
					now = randomStep(rng, now, limits[0].EmissionInterval(), period, starts[0])
					capacity := alg.Capacity(limits[0])
					cost := 1 + rng.Int64N(min(capacity, 1500)+1)
					if rng.IntN(3) == 0 {
						cost = rng.Int64N(3)
					}
					req := core.TakeRequest{Key: fmt.Sprintf("x%d", seq), Algorithm: alg, Limits: limits, Cost: cost, Now: now}
					want, werr := ref.Take(bg, req)
					got, gerr := st.Take(bg, req)
					if werr != nil {
						require.ErrorIs(t, gerr, core.ErrClock)
						continue
					}
					require.NoError(t, gerr, "seq %d step %d", seq, i)
					require.Equal(t, want, got, "seq %d step %d: limits %v cost %d at %d", seq, i, limits, cost, core.Micros(now))
				}
			}
		})
	}
}

// randomLimits draws one to four limits from pool that alg accepts (the
// windows take no burst), or a limit of 4/s when none fits.
func randomLimits(rng *rand.Rand, alg core.Algorithm, pool []core.Limit) []core.Limit {
	var limits []core.Limit
	for range 1 + rng.IntN(4) {
		l := pool[rng.IntN(len(pool))]
		if !alg.OneWord() {
			l.Burst = l.Rate
		}
		if alg.ValidateLimit(l) == nil {
			limits = append(limits, l)
		}
	}
	if len(limits) == 0 {
		limits = []core.Limit{core.PerSecond(4)}
	}
	return limits
}

// randomStep moves now: not at all, by up to two intervals, by up to a period,
// or back by up to a period; to reset when it leaves core's range.
func randomStep(rng *rand.Rand, now time.Time, interval, period time.Duration, reset time.Time) time.Time {
	switch r := rng.IntN(10); {
	case r < 4:
	case r < 7:
		now = now.Add(time.Duration(rng.Int64N(int64(interval)*2/1000+1)) * time.Microsecond)
	case r < 9:
		now = now.Add(time.Duration(rng.Int64N(int64(period)/1000+1)) * time.Microsecond)
	default:
		now = now.Add(-time.Duration(rng.Int64N(int64(period)/1000+1)) * time.Microsecond)
	}
	if core.Micros(now) > core.MaxTime || core.Micros(now) < 0 {
		now = reset
	}
	return now
}
