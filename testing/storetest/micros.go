package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RunMicrosTaker checks a store's TakeMicros (core.MicrosTaker), when it
// has one: on Limiter set-ups that reach every kind of state (each
// algorithm alone, with a second limit, with a penalty box; a debt bound; a
// calendar quota), random requests decided through TakeMicros and through
// Take on two fresh stores get the same decisions, and a Limiter over the
// store (which calls TakeMicros) decides and refunds as one over the same
// kind of store with TakeMicros hidden.
func RunMicrosTaker(t *testing.T, newStore NewStore) {
	if _, ok := newStore(t).(core.MicrosTaker); !ok {
		return // nothing to check: Limiters call Take
	}
	for name, newLimiter := range microsCases() {
		t.Run(name, func(t *testing.T) { runMicrosCase(t, newStore, newLimiter) })
	}
}

// limiterOn builds a Limiter over a store on a clock.
type limiterOn func(core.Store, core.Clock) (*core.Limiter, error)

// microsCases are RunMicrosTaker's Limiter set-ups.
func microsCases() map[string]limiterOn {
	cases := map[string]limiterOn{}
	for _, alg := range core.Algorithms() {
		cases[alg.String()] = func(st core.Store, clk core.Clock) (*core.Limiter, error) {
			return core.NewLimiter(st, alg, core.PerSecond(5), core.WithClock(clk))
		}
		cases[alg.String()+" two limits"] = func(st core.Store, clk core.Clock) (*core.Limiter, error) {
			return core.NewLimiter(st, alg, core.PerSecond(5), core.WithClock(clk), core.WithLimit(core.PerMinute(20)))
		}
		cases[alg.String()+" penalty box"] = func(st core.Store, clk core.Clock) (*core.Limiter, error) {
			return core.NewLimiter(st, alg, core.PerSecond(5), core.WithClock(clk), core.WithBlockFor(3*time.Second))
		}
	}
	cases["gcra debt"] = func(st core.Store, clk core.Clock) (*core.Limiter, error) {
		return core.NewLimiter(st, core.GCRA, core.PerSecond(5), core.WithClock(clk), core.WithDebt(3))
	}
	cases["fixed window monthly"] = func(st core.Store, clk core.Clock) (*core.Limiter, error) {
		return core.NewLimiter(st, core.FixedWindow, core.Monthly(40), core.WithClock(clk))
	}
	return cases
}

// recorder records the request a Limiter sends: the base of TakeMicros.
type recorder struct{ req core.TakeRequest }

func (r *recorder) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	r.req = req
	return core.Decision{Allowed: true}, nil
}

// withoutMicros hides a store's TakeMicros: Limiters over it call Take.
type withoutMicros struct{ core.Store }

func runMicrosCase(t *testing.T, newStore NewStore, newLimiter limiterOn) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	clk := core.NewManualClock(Start)
	var rec recorder
	_, err := newLimiter(&rec, clk)
	must.NoError(t, err)
	viaTake, viaMicros := newStore(t), newStore(t).(core.MicrosTaker)
	direct, err := newLimiter(newStore(t), clk)
	must.NoError(t, err)
	general, err := newLimiter(withoutMicros{newStore(t)}, clk)
	must.NoError(t, err)
	for i := range 600 {
		clk.Advance(time.Duration(rng.Int64N(int64(400 * time.Millisecond))))
		key, cost := []string{"a", "b"}[rng.IntN(2)], rng.Int64N(4)
		now := core.Micros(clk.Now())
		req := rec.req
		req.Key, req.Cost, req.Now = key, cost, time.UnixMicro(now)
		want, wantErr := viaTake.Take(ctx, req)
		got, gotErr := viaMicros.TakeMicros(ctx, &rec.req, key, cost, now)
		must.Equal(t, wantErr, gotErr, "request %d", i)
		must.Equal(t, want, got, "request %d: TakeMicros", i)
		dd, errD := direct.AllowN(ctx, key, cost)
		dg, errG := general.AllowN(ctx, key, cost)
		must.Equal(t, errG, errD, "request %d", i)
		must.Equal(t, dg, dd, "request %d: a Limiter on TakeMicros", i)
		if dd.Allowed && cost > 0 && rng.IntN(4) == 0 { // the Decision carries what a refund needs
			rd, errD := direct.Refund(ctx, key, cost, dd)
			rg, errG := general.Refund(ctx, key, cost, dg)
			must.Equal(t, errG, errD, "request %d: refund", i)
			must.Equal(t, rg, rd, "request %d: refund", i)
		}
	}
}
