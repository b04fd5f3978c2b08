package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

var tierStart = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func newTierBase(t *testing.T) (*core.Limiter, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(tierStart)
	lim, err := core.NewLimiter(newMemStore(t), core.FixedWindow, core.PerMinute(2), core.WithClock(clk), core.WithNamespace("api"))
	must.NoError(t, err)
	return lim, clk
}

func TestTierNames(t *testing.T) {
	base, _ := newTierBase(t)
	expect.Equal(t, "default", base.Name())
	cases := []struct {
		name      string
		limits    []core.Limit
		wantNames []string
	}{
		{"one unnamed", []core.Limit{core.PerMinute(10)}, []string{"free"}},
		{"two unnamed", []core.Limit{core.PerMinute(10), core.PerHour(100)}, []string{"free", "free 100/h"}},
		{"named kept", []core.Limit{core.PerMinute(10).Named("minute"), core.PerHour(100).Named("hour")}, []string{"minute", "hour"}},
		{"header-safe derived name", []core.Limit{core.PerMinute(10), core.Every(1, 500*time.Microsecond)}, []string{"free", "free 1/500us"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tier, err := base.Tier("free", c.limits[0], c.limits[1:]...)
			must.NoError(t, err)
			expect.Equal(t, "free", tier.Name())
			got := make([]string, 0, len(c.wantNames))
			for _, l := range tier.Limits() {
				got = append(got, l.Name)
				expect.Equal(t, l.Rate, l.Burst, "the burst defaults to the rate")
			}
			expect.Equal(t, c.wantNames, got)
			expect.Equal(t, base.Algorithm(), tier.Algorithm())
			expect.Same(t, base.Store(), tier.Store())
		})
	}
	named, err := core.NewLimiter(newMemStore(t), core.GCRA, core.PerSecond(1).Named("login"))
	must.NoError(t, err)
	expect.Equal(t, "login", named.Name())
}

func TestTierRejects(t *testing.T) {
	base, _ := newTierBase(t)
	nine := make([]core.Limit, 8)
	for i := range nine {
		nine[i] = core.PerHour(int64(i + 1))
	}
	cases := []struct {
		name  string
		tier  string
		limit core.Limit
		more  []core.Limit
		want  error
	}{
		{"empty name", "", core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"long name", strings.Repeat("n", 65), core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"quote", `a"b`, core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"backslash", `a\b`, core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"newline", "a\nb", core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"non-ASCII", "plän", core.PerSecond(1), nil, core.ErrInvalidLimit},
		{"zero limit", "free", core.Limit{}, nil, core.ErrInvalidLimit},
		{"burst on a window", "free", core.PerSecond(2).WithBurst(5), nil, core.ErrInvalidLimit},
		{"bad further limit", "free", core.PerSecond(1), []core.Limit{{Rate: -1, Period: time.Second}}, core.ErrInvalidLimit},
		{"nine limits", "free", core.PerSecond(1), nine, core.ErrInvalidOption},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tier *core.Limiter
			var err error
			must.NotPanics(t, func() { tier, err = base.Tier(c.tier, c.limit, c.more...) })
			must.ErrorIs(t, err, c.want)
			expect.Nil(t, tier)
		})
	}
	tier, err := base.Tier(strings.Repeat("n", 64), core.PerSecond(1))
	must.NoError(t, err, "64 bytes is allowed")
	expect.Len(t, tier.Name(), 64)
}

func TestTierKeepsStateApart(t *testing.T) {
	base, _ := newTierBase(t)
	ctx := context.Background()
	free, err := base.Tier("free", core.PerMinute(1))
	must.NoError(t, err)
	paid, err := base.Tier("paid", core.PerMinute(3))
	must.NoError(t, err)
	for i, want := range []bool{true, false} {
		d, err := free.Allow(ctx, "user")
		must.NoError(t, err)
		expect.Equal(t, want, d.Allowed, "free request %d", i)
	}
	for i, want := range []bool{true, true, true, false} {
		d, err := paid.Allow(ctx, "user")
		must.NoError(t, err)
		expect.Equal(t, want, d.Allowed, "paid request %d", i)
		expect.Equal(t, "paid", d.Limit.Name)
	}
	d, err := base.Peek(ctx, "user")
	must.NoError(t, err)
	expect.Equal(t, int64(2), d.Remaining, "the base limiter's count is its own")
}

func TestPeekChangesNothing(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			clk := core.NewManualClock(tierStart)
			lim, err := core.NewLimiter(newMemStore(t), alg, core.PerMinute(3), core.WithClock(clk))
			must.NoError(t, err)
			ctx := context.Background()
			_, err = lim.Allow(ctx, "k")
			must.NoError(t, err)
			for range 3 {
				d, err := lim.Peek(ctx, "k")
				must.NoError(t, err)
				expect.True(t, d.Allowed)
				expect.Equal(t, int64(2), d.Remaining)
			}
		})
	}
}

func TestReset(t *testing.T) {
	base, _ := newTierBase(t)
	ctx := context.Background()
	for range 2 {
		_, err := base.Allow(ctx, "k")
		must.NoError(t, err)
	}
	d, err := base.Peek(ctx, "k")
	must.NoError(t, err)
	must.Equal(t, int64(0), d.Remaining)
	must.NoError(t, base.Reset(ctx, "k"))
	d, err = base.Peek(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, int64(2), d.Remaining, "the key starts fresh")
	expect.NoError(t, base.Reset(ctx, "never seen"), "resetting an unknown key is not an error")

	plain, err := core.NewLimiter(&recordingStore{}, core.GCRA, core.PerSecond(1))
	must.NoError(t, err)
	expect.ErrorIs(t, plain.Reset(ctx, "k"), core.ErrUnsupported)
}

// Refund hands the store one request: the cost given back (clamped to what
// the admission spent) and the admission's instant.
func TestRefundRequest(t *testing.T) {
	ctx := context.Background()
	clk := core.NewManualClock(tierStart)
	st := newMemStore(t)
	rec := &recordingStore{}
	lim, err := core.NewLimiter(st, core.SlidingWindow, core.PerMinute(5), core.WithClock(clk))
	must.NoError(t, err)
	spy, err := core.NewLimiter(rec, core.SlidingWindow, core.PerMinute(5), core.WithClock(clk))
	must.NoError(t, err)
	admitted, err := lim.AllowN(ctx, "k", 2)
	must.NoError(t, err)
	peek, err := lim.Peek(ctx, "k")
	must.NoError(t, err)
	clk.Advance(3 * time.Second)

	cases := []struct {
		name         string
		n            int64
		admitted     core.Decision
		wantCost     int64
		wantAdmitted time.Time
	}{
		{"clamped to the admission", 5, admitted, -2, tierStart},
		{"part of it", 1, admitted, -1, tierStart},
		{"zero decision: admitted now", 7, core.Decision{}, -7, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _ = spy.Refund(ctx, "k", c.n, c.admitted)
			expect.Equal(t, c.wantCost, rec.last.Cost)
			expect.True(t, c.wantAdmitted.Equal(rec.last.Admitted), "admitted at %s", rec.last.Admitted)
			expect.Equal(t, clk.Now(), rec.last.Now)
		})
	}
	t.Run("a peek spent nothing", func(t *testing.T) {
		d, err := lim.Refund(ctx, "k", 1, peek)
		must.NoError(t, err)
		expect.Equal(t, int64(3), d.Remaining, "nothing given back")
	})
	t.Run("a clock that stepped back", func(t *testing.T) {
		clk.Set(tierStart.Add(-time.Second))
		_, _ = spy.Refund(ctx, "k", 1, admitted)
		expect.Equal(t, time.Time{}, rec.last.Admitted, "an admission after now counts as now")
		clk.Set(tierStart.Add(3 * time.Second))
	})
	t.Run("a store error", func(t *testing.T) {
		rec.err = errors.New("down")
		_, err := spy.Refund(ctx, "k", 1, admitted)
		expect.ErrorIs(t, err, rec.err)
		rec.err = nil
	})
	d, err := lim.Refund(ctx, "k", 2, admitted)
	must.NoError(t, err)
	expect.Equal(t, int64(5), d.Remaining, "given back whole")
}

func TestRefundRejects(t *testing.T) {
	ctx := context.Background()
	lim, err := core.NewLimiter(newMemStore(t), core.SlidingWindow, core.PerMinute(5), core.WithClock(core.NewManualClock(tierStart)))
	must.NoError(t, err)
	admitted, err := lim.AllowN(ctx, "k", 2)
	must.NoError(t, err)
	denied, err := lim.AllowN(ctx, "k", 4)
	must.NoError(t, err)
	must.False(t, denied.Allowed)
	for _, n := range []int64{0, -3} {
		_, err := lim.Refund(ctx, "k", n, admitted)
		expect.ErrorIs(t, err, core.ErrInvalidCost, "n = %d", n)
	}
	_, err = lim.Refund(ctx, "k", 1, denied)
	expect.ErrorIs(t, err, core.ErrInvalidCost)
	d, err := lim.Peek(ctx, "k")
	must.NoError(t, err)
	expect.Equal(t, int64(3), d.Remaining, "nothing changed")
}
