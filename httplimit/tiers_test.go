package httplimit

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// tiered is a policy of 1/min by default and the tiers "paid" (3/min) and
// "team" (2/s), picked by the X-Plan header.
func tiered(t *testing.T, opts ...Option) (*Policy, *core.Limiter) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1), core.WithClock(core.NewManualClock(httpT0)))
	must.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerMinute(3))
	must.NoError(t, err)
	team, err := lim.Tier("team", core.PerSecond(2))
	must.NoError(t, err)
	pick := func(r keyfuncs.Request) (string, error) {
		switch r.Header("X-Plan") {
		case "panic":
			panic("pick bug")
		case "fail":
			return "paid", errors.New("no plan") // the name is ignored on an error
		}
		return r.Header("X-Plan"), nil
	}
	p, err := New(lim, append([]Option{WithKey(peerKey), WithTiers(pick, paid, team)}, opts...)...)
	must.NoError(t, err)
	return p, lim
}

// Each tier has its own limits, counters and headers; anything else gets
// the default.
func TestTiersPickLimitsPerRequest(t *testing.T) {
	rec := &recorder{}
	p, _ := tiered(t, WithObserver(rec), WithLogger(slog.New(slog.DiscardHandler)))
	tests := []struct {
		plan, policy, rateLimit string
		code                    int
		tier                    string
	}{
		{"paid", `"paid";q=3;w=60`, `"paid";r=2;t=20`, 200, "paid"},
		{"paid", `"paid";q=3;w=60`, `"paid";r=1;t=40`, 200, "paid"},
		{"", `"default";q=1;w=60`, `"default";r=0;t=60`, 200, "default"},
		{"gold", `"default";q=1;w=60`, `"default";r=0;t=60`, 429, "default"},
		{"default", `"default";q=1;w=60`, `"default";r=0;t=60`, 429, "default"},
		{"panic", `"default";q=1;w=60`, `"default";r=0;t=60`, 429, "default"},
		{"team", `"team";q=2;w=1`, `"team";r=1;t=1`, 200, "team"},
		{"paid", `"paid";q=3;w=60`, `"paid";r=0;t=60`, 200, "paid"},
	}
	for i, tt := range tests {
		w, _, _ := serve(p, fakereq.New("192.0.2.1:1", "X-Plan", tt.plan, "Accept", "application/json"))
		expect.Equal(t, tt.code, w.Code, "request %d", i)
		expect.Equal(t, tt.policy, w.Header().Get(HeaderRateLimitPolicy), "request %d", i)
		expect.Equal(t, tt.rateLimit, w.Header().Get(HeaderRateLimit), "request %d", i)
		expect.Equal(t, tt.tier, rec.last().Policy, "request %d", i)
		if tt.code == 429 {
			expect.Contains(t, w.Body.String(), `"violated-policies":["default"]`)
		}
	}
}

// A pick function that fails or panics gets the default tier, and a panic is
// logged.
func TestTierPickPanicIsLogged(t *testing.T) {
	logger, buf := logBuffer()
	p, _ := tiered(t, WithLogger(logger))
	w, _, next := serve(p, fakereq.New("192.0.2.1:1", "X-Plan", "panic"))
	expect.True(t, next)
	expect.Equal(t, `"default";q=1;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Contains(t, buf.String(), "tier pick function panicked")
	buf.Reset()
	w, _, _ = serve(p, fakereq.New("192.0.2.2:1", "X-Plan", "fail"))
	expect.Equal(t, `"default";q=1;w=60`, w.Header().Get(HeaderRateLimitPolicy), "a failed pick gets the default")
	expect.Empty(t, buf.String(), "a failed pick is the request's, not a bug: nothing is logged")
}

func TestWithTiersRejectsBadInput(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	paid, err := lim.Tier("paid", core.PerMinute(3))
	must.NoError(t, err)
	paid2, err := lim.Tier("paid", core.PerMinute(5))
	must.NoError(t, err)
	named, err := lim.Tier("default", core.PerMinute(5))
	must.NoError(t, err)
	pick := keyfuncs.Func(func(r keyfuncs.Request) (string, error) { return r.Header("X-Plan"), nil })
	for _, tt := range []struct {
		name string
		opt  Option
	}{
		{"nil pick", WithTiers(nil, paid)},
		{"no tier", WithTiers(pick)},
		{"nil tier", WithTiers(pick, paid, nil)},
		{"duplicate names", WithTiers(pick, paid, paid2)},
		{"named like the default", WithTiers(pick, named)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(lim, tt.opt)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Nil(t, p)
		})
	}
}

// Reset unblocks a key under the default and every tier; Peek reads one.
func TestResetAndPeek(t *testing.T) {
	p, _ := tiered(t)
	ctx := context.Background()
	for _, plan := range []string{"", "", "paid", "paid", "paid", "paid"} {
		serve(p, fakereq.New("192.0.2.1:1", "X-Plan", plan))
	}
	for _, tier := range []string{"", "default", "paid"} {
		d, err := p.Peek(ctx, tier, "192.0.2.1:1")
		must.NoError(t, err)
		expect.Zero(t, d.Remaining, tier)
	}
	must.NoError(t, p.Reset(ctx, "192.0.2.1:1"))
	d, err := p.Peek(ctx, "paid", "192.0.2.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(3), d.Remaining)
	d, err = p.Peek(ctx, "", "192.0.2.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(1), d.Remaining)
	must.NoError(t, p.Reset(ctx, "never-seen"), "a key the store does not hold resets fine")
	_, err = p.Peek(ctx, "gold", "192.0.2.1:1")
	expect.ErrorIs(t, err, core.ErrInvalidOption)

	noReset, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil)
	expect.True(t, errors.Is(noReset.Reset(ctx, "k"), core.ErrUnsupported))
}

// Many tiers are found through a map; the answer is the same.
func TestManyTiers(t *testing.T) {
	lim, err := core.NewLimiter(&localMapStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	var tiers []*core.Limiter
	for i := range maxScannedTiers + 2 {
		tl, err := lim.Tier(string(rune('a'+i)), core.PerMinute(int64(10+i)))
		must.NoError(t, err)
		tiers = append(tiers, tl)
	}
	p, err := New(lim, WithKey(peerKey), WithTiers(keyfuncs.Func(func(r keyfuncs.Request) (string, error) { return r.Header("X-Plan"), nil }), tiers...))
	must.NoError(t, err)
	must.NotNil(t, p.tierMap)
	w, _, _ := serve(p, fakereq.New("192.0.2.1:1", "X-Plan", "j"))
	expect.Equal(t, `"j";q=19;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	w, _, _ = serve(p, fakereq.New("192.0.2.1:1", "X-Plan", "z"))
	expect.Equal(t, `"default";q=1;w=60`, w.Header().Get(HeaderRateLimitPolicy))
}
