package storetest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// settleAlgorithms are the algorithms a settle may charge under: every one
// but the sliding log, which refuses a charge.
var settleAlgorithms = []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.FixedWindow, core.SlidingWindow, core.GCRA}

// RunSettle drives core.Limiter.Settle over the store: scripted reserves
// and settles, under one limit and two, decide exactly as the reference
// does; a key never rises above
// a fresh key's quota and never owes more than the debt bound; a settle
// with no reservation, or a second one, is an error and changes nothing;
// and 64 goroutines on 4 limiter instances settle concurrently with every
// unit accounted for. A store that holds no debt (it refuses core.WithDebt
// with core.ErrUnsupported, as the Redis scripts do) is driven with a
// bound of 0 (the Redis scripts hold the debt, and are driven with it).
func RunSettle(t *testing.T, newStore NewStore) {
	for _, alg := range settleAlgorithms {
		t.Run(alg.String()+"/scripted", func(t *testing.T) { settleScripted(t, newStore, alg) })
		t.Run(alg.String()+"/bound", func(t *testing.T) { settleBound(t, newStore, alg) })
		t.Run(alg.String()+"/bad input", func(t *testing.T) { settleBadInput(t, newStore, alg) })
		t.Run(alg.String()+"/concurrent", func(t *testing.T) { settleConcurrent(t, newStore, alg) })
	}
	t.Run("sliding-log refuses a charge", func(t *testing.T) {
		lim := settleLimiter(t, newStore(t), core.SlidingLog, []core.Limit{core.PerMinute(5)}, 0, core.NewManualClock(Start))
		d, err := lim.Allow(context.Background(), "k")
		must.NoError(t, err)
		_, err = lim.Settle(context.Background(), "k", 3, &d)
		expect.ErrorIs(t, err, core.ErrUnsupported)
		d, err = lim.Allow(context.Background(), "k2")
		must.NoError(t, err)
		after, err := lim.Settle(context.Background(), "k2", 0, &d)
		must.NoError(t, err, "a settle below the reservation is a refund, which the log takes")
		expect.Equal(t, int64(5), after.Remaining)
	})
}

// settleLimiter is a limiter on st with debt bound debt, or 0 when st holds
// no debt.
func settleLimiter(t *testing.T, st core.Store, alg core.Algorithm, limits []core.Limit, debt int64, clk *core.ManualClock) *core.Limiter {
	t.Helper()
	opts := []core.Option{core.WithClock(clk), core.WithNamespace(t.Name()), core.WithDebt(debt)}
	for _, l := range limits[1:] {
		opts = append(opts, core.WithLimit(l))
	}
	lim, err := core.NewLimiter(st, alg, limits[0], opts...)
	must.NoError(t, err)
	if _, err := lim.Peek(context.Background(), "probe"); errors.Is(err, core.ErrUnsupported) && debt != 0 {
		return settleLimiter(t, st, alg, limits, 0, clk)
	}
	return lim
}

// settleScripted runs one random sequence of reserves and settles on the
// store and on the reference, and demands the same decisions.
func settleScripted(t *testing.T, newStore NewStore, alg core.Algorithm) {
	settleScript(t, newStore, alg, core.PerSecond(4))
	settleScript(t, newStore, alg, core.PerSecond(4), core.PerMinute(30).Named("minute"))
}

// settleScript runs one random sequence under limits.
func settleScript(t *testing.T, newStore NewStore, alg core.Algorithm, limits ...core.Limit) {
	ctx := context.Background()
	clk := core.NewManualClock(Start)
	got := settleLimiter(t, newStore(t), alg, limits, 3, clk)
	want := settleLimiter(t, NewReference(), alg, limits, got.MaxDebt(), clk)
	rng := rand.New(rand.NewPCG(20, uint64(alg)*uint64(len(limits))))
	for i := range 300 {
		clk.Advance(time.Duration(rng.IntN(400)) * time.Millisecond)
		key := []string{"a", "b"}[rng.IntN(2)]
		est := int64(rng.IntN(3))
		dg, err := got.AllowN(ctx, key, est)
		must.NoError(t, err)
		dw, err := want.AllowN(ctx, key, est)
		must.NoError(t, err)
		sameDecision(t, dw, dg, "step %d: reserve %d", i, est)
		if !dg.Allowed {
			continue
		}
		actual := int64(rng.IntN(8))
		ag, err := got.Settle(ctx, key, actual, &dg)
		must.NoError(t, err)
		aw, err := want.Settle(ctx, key, actual, &dw)
		must.NoError(t, err)
		sameDecision(t, aw, ag, "step %d: settle %d at %d", i, est, actual)
		expect.LessOrEqual(t, ag.Debt, got.MaxDebt(), "step %d: the debt bound", i)
		expect.LessOrEqual(t, ag.Remaining, ag.Limit.EffectiveBurst(), "step %d: never above a fresh key", i)
	}
}

// sameDecision checks the figures a client sees.
func sameDecision(t *testing.T, want, got core.Decision, msg ...any) {
	t.Helper()
	type view struct {
		Allowed                      bool
		Remaining, Debt              int64
		ResetAfter, RetryAfter, Wait time.Duration
	}
	expect.Equal(t, view{want.Allowed, want.Remaining, want.Debt, want.ResetAfter, want.RetryAfter, want.Delay},
		view{got.Allowed, got.Remaining, got.Debt, got.ResetAfter, got.RetryAfter, got.Delay}, msg...)
}

// settleBound charges far more than the quota, MaxInt64 included: the key
// owes at most the bound, and the next request's RetryAfter tells it.
func settleBound(t *testing.T, newStore NewStore, alg core.Algorithm) {
	ctx := context.Background()
	clk := core.NewManualClock(Start)
	lim := settleLimiter(t, newStore(t), alg, []core.Limit{core.PerMinute(10)}, 4, clk)
	for _, actual := range []int64{50, math.MaxInt64} {
		key := "k" + time.Duration(actual).String()
		d, err := lim.AllowN(ctx, key, 1)
		must.NoError(t, err)
		after, err := lim.Settle(ctx, key, actual, &d)
		must.NoError(t, err)
		expect.Equal(t, lim.MaxDebt(), after.Debt)
		expect.Equal(t, int64(0), after.Remaining)
		next, err := lim.Allow(ctx, key)
		must.NoError(t, err)
		expect.False(t, next.Allowed, "the quota is spent, and the debt with it")
		expect.Greater(t, next.RetryAfter, time.Duration(0))
	}
}

// settleBadInput: a negative cost, a settle of nothing, of a denial, and a
// second settle are errors that change nothing.
func settleBadInput(t *testing.T, newStore NewStore, alg core.Algorithm) {
	ctx := context.Background()
	clk := core.NewManualClock(Start)
	lim := settleLimiter(t, newStore(t), alg, []core.Limit{core.PerMinute(5)}, 2, clk)
	d, err := lim.AllowN(ctx, "k", 2)
	must.NoError(t, err)
	_, err = lim.Settle(ctx, "k", -1, &d)
	expect.ErrorIs(t, err, core.ErrInvalidCost)
	_, err = lim.Settle(ctx, "k", 1, &core.Decision{Allowed: true})
	expect.ErrorIs(t, err, core.ErrNotReserved)
	_, err = lim.Settle(ctx, "k", 0, &d)
	must.NoError(t, err)
	expect.Equal(t, int64(5), peekRemaining(t, lim, "k"), "the reservation given back")
	for _, again := range []int64{0, 1, 9} {
		_, err = lim.Settle(ctx, "k", again, &d)
		expect.ErrorIs(t, err, core.ErrNotReserved, "a second settle at %d", again)
	}
	expect.Equal(t, int64(5), peekRemaining(t, lim, "k"), "never counted twice, never minted")
	denied, err := lim.AllowN(ctx, "k", 6)
	must.NoError(t, err)
	must.False(t, denied.Allowed)
	_, err = lim.Settle(ctx, "k", 0, &denied)
	expect.ErrorIs(t, err, core.ErrNotReserved)
}

// settleConcurrent: 64 goroutines over 4 limiter instances on one store
// reserve 1 and settle from 0 to 3, on a frozen clock. Every admission
// found room; at the end the key owes at most the bound and holds no more
// than a fresh key; with settles at or below the reservation, the quota
// used is exactly the sum of the settled costs.
func settleConcurrent(t *testing.T, newStore NewStore, alg core.Algorithm) {
	const instances, goroutines, rounds, rate = 4, 64, 8, 200
	for _, top := range []int64{1, 3} {
		st := newStore(t)
		clk := core.NewManualClock(Start)
		lims := make([]*core.Limiter, instances)
		for i := range lims {
			lims[i] = settleLimiter(t, st, alg, []core.Limit{core.PerHour(rate)}, 20, clk)
		}
		var settled atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lim := lims[g%instances]
				rng := rand.New(rand.NewPCG(uint64(g), uint64(top)))
				for range rounds {
					d, err := lim.AllowN(context.Background(), "shared", 1)
					if err != nil || !d.Allowed {
						continue
					}
					actual := rng.Int64N(top + 1)
					if _, err := lim.Settle(context.Background(), "shared", actual, &d); err == nil {
						settled.Add(actual)
					}
				}
			}()
		}
		wg.Wait()
		peek, err := lims[0].Peek(context.Background(), "shared")
		must.NoError(t, err)
		expect.LessOrEqual(t, peek.Debt, lims[0].MaxDebt(), "the debt bound holds")
		expect.LessOrEqual(t, peek.Remaining, int64(rate), "nothing minted")
		if top == 1 {
			expect.Equal(t, settled.Load(), int64(rate)-peek.Remaining, "every settled unit counted once")
		}
	}
}
