package memory_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// captured records the request a Limiter sends: the base of TakeMicros.
type captured struct{ req core.TakeRequest }

func (c *captured) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	c.req = req
	return core.Decision{Allowed: true}, nil
}

// hidden is a memory store without its TakeMicros: Limiters over it take
// the general path.
type hidden struct{ core.Store }

// directCases are Limiter set-ups whose requests reach every path of the
// store: one word, a packed window, an entry (two limits, the log, a
// penalty box, a debt bound, a calendar quota).
func directCases() map[string]func(core.Store, core.Clock) (*core.Limiter, error) {
	cases := map[string]func(core.Store, core.Clock) (*core.Limiter, error){}
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

// TakeMicros decides as Take does, on every path of the store, and a
// Limiter over the store (which calls TakeMicros) decides, refunds and
// settles as one over the same store without it.
func TestTakeMicrosDecidesAsTake(t *testing.T) {
	ctx := context.Background()
	for name, newLimiter := range directCases() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 9))
			clk := core.NewManualClock(time.Unix(1_767_225_600, 0))
			var c captured
			_, err := newLimiter(&c, clk)
			must.NoError(t, err)
			viaTake, viaMicros := newStore(t), newStore(t)
			direct, err := newLimiter(newStore(t), clk)
			must.NoError(t, err)
			general, err := newLimiter(hidden{newStore(t)}, clk)
			must.NoError(t, err)
			for i := range 600 {
				clk.Advance(time.Duration(rng.Int64N(int64(400 * time.Millisecond))))
				key, cost := []string{"a", "b"}[rng.IntN(2)], rng.Int64N(4)
				now := core.Micros(clk.Now())
				req := c.req
				req.Key, req.Cost, req.Now = key, cost, time.UnixMicro(now)
				want, wantErr := viaTake.Take(ctx, req)
				got, gotErr := viaMicros.TakeMicros(ctx, &c.req, key, cost, now)
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
		})
	}
}

// A closed store's errors reach the breaker on the direct path as on the
// general one: it opens after DefaultBreaker's failures and answers
// ErrBreakerOpen without asking the store.
func TestTakeMicrosFailuresOpenTheBreaker(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	l, err := core.NewLimiter(st, core.GCRA, core.PerSecond(5))
	must.NoError(t, err)
	must.NoError(t, st.Close())
	var closed, open int
	for range core.DefaultBreaker().Failures + 3 {
		_, err := l.Allow(context.Background(), "k")
		switch {
		case errors.Is(err, core.ErrStoreClosed):
			closed++
		case errors.Is(err, core.ErrBreakerOpen):
			open++
		default:
			t.Fatalf("unexpected %v", err)
		}
	}
	expect.Equal(t, core.DefaultBreaker().Failures, closed, "store errors before the breaker opens")
	expect.Equal(t, 3, open, "answers of the open breaker")
}
