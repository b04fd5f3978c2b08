package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RunPenalty checks a store's penalty box (core.WithBlockFor, the
// TakeRequest's BlockFor): random scripts with a block demand, decision by
// decision, what the reference decides; two limiters sharing the store see
// one block, and a reset on either lifts it; invalid BlockFor values are
// errors that spend nothing; and under 64 goroutines on each of 4 limiters
// sharing the store, exactly the limit is admitted before the block, nothing
// during it, and exactly the limit again after it.
func RunPenalty(t *testing.T, newStore NewStore) {
	t.Run("Scripted", func(t *testing.T) { runPenaltyScripted(t, newStore) })
	t.Run("Instances", func(t *testing.T) { runPenaltyInstances(t, newStore) })
	t.Run("BadInput", func(t *testing.T) { runPenaltyBadInput(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { runPenaltyConcurrent(t, newStore) })
}

// runPenaltyScripted is RunScripted with a block a few emission intervals
// long, so that blocks start, refuse, are cut by a clock that steps back,
// and end within a script.
func runPenaltyScripted(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		for i, limits := range limitSets(alg) {
			t.Run(fmt.Sprintf("%s/%d", alg, i), func(t *testing.T) {
				st := newStore(t)
				ref := NewReference()
				ns := fmt.Sprintf("penalty-%s-%d", alg, i)
				runPenaltyScript(t, st, ref, ns, alg, limits, limits[0].Period+7*time.Microsecond, uint64(i)+uint64(alg)<<8, true)
				// A block shorter than the limits' own wait: Retry-After is the later.
				short := (limits[0].EmissionInterval() / 3).Truncate(time.Microsecond) + time.Microsecond
				runPenaltyScript(t, st, ref, ns+"-short", alg, limits, short, uint64(i)+uint64(alg)<<8+1, false)
			})
		}
	}
}

// runPenaltyScript drives st and ref with penaltyScript under a block of
// block, and demands the same decisions; a script under a long block must
// meet a running block (meet).
func runPenaltyScript(t *testing.T, st, ref core.Store, ns string, alg core.Algorithm, limits []core.Limit, block time.Duration, seed uint64, meet bool) {
	blocked := 0
	for n, s := range penaltyScript(seed, limits, block, 300) {
		got := agree(t, st, ref, n, core.TakeRequest{Key: s.key, Namespace: ns, Algorithm: alg, Limits: limits, Cost: s.cost, Now: s.at, Admitted: s.admitted, BlockFor: block})
		if got.Blocked {
			blocked++
			expect.False(t, got.Allowed, "step %d: a blocked request is refused", n)
		}
	}
	if meet {
		expect.Positive(t, blocked, "the script met a running block")
	}
}

// penaltyScript makes a reproducible random sequence of requests of two
// keys, paced so that keys are denied often: bursts, gaps up to two emission
// intervals, waits out of a block, a clock that steps back, a jump of a
// year; costs as script's, refunds included.
func penaltyScript(seed uint64, limits []core.Limit, block time.Duration, n int) []step {
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	interval := limits[0].EmissionInterval()
	capacity := limits[0].EffectiveBurst()
	now := Start
	steps := make([]step, 0, n)
	randUpTo := func(d time.Duration) time.Duration {
		return time.Duration(rng.Int64N(int64(d)/1000+1)) * time.Microsecond
	}
	for range n {
		switch r := rng.IntN(100); {
		case r < 50: // same instant: a burst
		case r < 80:
			now = now.Add(randUpTo(2 * interval))
		case r < 92:
			now = now.Add(randUpTo(block + limits[0].Period))
		case r < 99:
			now = now.Add(-randUpTo(block))
		default:
			now = now.Add(365 * 24 * time.Hour)
		}
		cost := int64(1)
		switch r := rng.IntN(100); {
		case r < 10:
			cost = 0
		case r < 20:
			cost = 2
		case r < 23:
			cost = capacity + 1
		case r < 30:
			cost = -1 - rng.Int64N(3)
		}
		admitted := refundAdmission(rng, steps, cost, 20) // before the key: the scripts' order of draws
		steps = append(steps, step{at: now, key: scriptKeys[3+rng.IntN(2)], cost: cost, admitted: admitted})
	}
	return steps
}

// penaltyLimiters returns n limiters of alg with limit and a block of block
// over one fresh store, on one manual clock standing at Start.
func penaltyLimiters(t *testing.T, newStore NewStore, n int, alg core.Algorithm, limit core.Limit, block time.Duration) ([]*core.Limiter, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(Start)
	st := newStore(t)
	lims := make([]*core.Limiter, n)
	for i := range lims {
		var err error
		lims[i], err = core.NewLimiter(st, alg, limit, core.WithClock(clk), core.WithNamespace(t.Name()), core.WithBlockFor(block))
		must.NoError(t, err)
	}
	return lims, clk
}

// runPenaltyInstances: a block started through one limiter refuses the
// other's requests and peeks, with the block's end; a reset through the
// other lifts it for both.
func runPenaltyInstances(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			lims, clk := penaltyLimiters(t, newStore, 2, alg, core.PerSecond(2), time.Minute)
			a, b := lims[0], lims[1]
			spend(t, a, "k", 2)
			d, err := a.Allow(ctx, "k")
			must.NoError(t, err)
			must.False(t, d.Allowed)
			expect.True(t, d.BlockStarted, "the denial starts the block")
			expect.Equal(t, time.Minute, d.RetryAfter)
			clk.Advance(20 * time.Second)
			d, err = b.Allow(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.Blocked, "the other instance sees the block")
			expect.Equal(t, 40*time.Second, d.RetryAfter)
			d, err = b.Peek(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.Blocked, "a peek reports the block")
			expect.Equal(t, 40*time.Second, d.RetryAfter, "and its end")
			d, err = b.Allow(ctx, "other")
			must.NoError(t, err)
			expect.True(t, d.Allowed, "another key is not blocked")
			if _, ok := a.Store().(core.Resetter); !ok {
				return
			}
			must.NoError(t, b.Reset(ctx, "k"))
			spend(t, a, "k", 2) // lifted, with a fresh quota
		})
	}
}

// runPenaltyBadInput: a negative, oversized or sub-microsecond BlockFor is
// an error wrapping core.ErrInvalidOption, and spends nothing.
func runPenaltyBadInput(t *testing.T, newStore NewStore) {
	st := newStore(t)
	ctx := context.Background()
	limits := []core.Limit{core.PerMinute(1)}
	for _, block := range []time.Duration{-time.Second, core.MaxPeriod + time.Microsecond, time.Nanosecond} {
		req := core.TakeRequest{Key: "bad", Namespace: "penalty-bad", Algorithm: core.GCRA, Limits: limits, Cost: 1, Now: Start, BlockFor: block}
		var err error
		must.NotPanics(t, func() { _, err = st.Take(ctx, req) })
		expect.ErrorIs(t, err, core.ErrInvalidOption, block)
	}
	good := core.TakeRequest{Key: "bad", Namespace: "penalty-bad", Algorithm: core.GCRA, Limits: limits, Cost: 1, Now: Start, BlockFor: time.Hour}
	d, err := st.Take(ctx, good)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the bad requests spent nothing")
}

// runPenaltyConcurrent: 64 goroutines on each of 4 limiters sharing one
// store, in three rounds: before the block exactly the limit is admitted;
// a period later (the limit alone would admit it all again) the block
// refuses every request; after the block, exactly the limit again.
func runPenaltyConcurrent(t *testing.T, newStore NewStore) {
	const instances, goroutines, rounds, rate = 4, 64, 4, 50
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow, core.SlidingLog} {
		t.Run(alg.String(), func(t *testing.T) {
			lims, clk := penaltyLimiters(t, newStore, instances, alg, core.Every(rate, 10*time.Second), time.Minute)
			hammer := func() (admitted, blocked int64) {
				var a, b atomic.Int64
				var wg sync.WaitGroup
				for i := range instances * goroutines {
					lim := lims[i%instances]
					wg.Go(func() {
						for range rounds {
							d, err := lim.Allow(context.Background(), "hot")
							if !expect.NoError(t, err) {
								return
							}
							if d.Allowed {
								a.Add(1)
							}
							if d.Blocked {
								b.Add(1)
							}
						}
					})
				}
				wg.Wait()
				return a.Load(), b.Load()
			}
			const total = instances * goroutines * rounds
			admitted, blocked := hammer()
			expect.Equal(t, int64(rate), admitted, "before the block")
			expect.Equal(t, int64(total-rate-1), blocked, "one denial starts the block; the rest are refused by it")
			clk.Advance(20 * time.Second)
			admitted, blocked = hammer()
			expect.Zero(t, admitted, "nothing is admitted during the block")
			expect.Equal(t, int64(total), blocked)
			clk.Advance(40 * time.Second)
			admitted, _ = hammer()
			expect.Equal(t, int64(rate), admitted, "after the block")
		})
	}
}
