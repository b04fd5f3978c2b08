package core_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A WordMeter decides exactly as AdvanceWord and Decide do, word and
// Decision alike, under a debt bound too: the memory store takes it on its
// hot path and the general path everywhere else.
func TestWordMeterAgreesWithDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	limits := []core.Limit{core.PerSecond(10), core.PerMinute(7).WithBurst(3), core.Every(5, 30*time.Second).WithBurst(40)}
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		for _, l := range limits {
			for _, opts := range [][]core.Option{nil, {core.WithDebt(2)}} {
				req := preparedWith(t, alg, l, opts...)
				var st [1]core.State
				now := int64(1_700_000_000_000_000)
				for range 1000 {
					now += rng.Int64N(3 * l.Period.Microseconds() / l.Rate)
					req.Cost = 1 + rng.Int64N(l.EffectiveBurst()+1)
					wm, ok := req.WordMeter(now)
					must.True(t, ok, "%s %s: a Limiter's plain spend is a WordMeter", alg, l)
					expect.Equal(t, req.WordUnit(), wm.Unit(), "the unit")
					t0 := st[0].T
					next := wm.Advance(t0, now)
					var want, got core.Decision
					must.NoError(t, req.Decide(&want, st[:], now))
					wm.Decide(&got, t0, now)
					must.Equal(t, st[0].T, next, "%s %s cost %d at %d: the word", alg, l, req.Cost, now)
					must.Equal(t, want, got, "%s %s cost %d at %d: the decision", alg, l, req.Cost, now)
				}
			}
		}
	}
}

// WordMeter covers a Limiter's plain spend of one meter and nothing else:
// the store decides the rest on its general path.
func TestWordMeterRefusesWhatItDoesNotCover(t *testing.T) {
	const now = int64(1_700_000_000_000_000)
	l := core.PerSecond(10)
	cases := map[string]struct {
		req core.TakeRequest
		now int64
	}{
		"built by hand":    {core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{l}, Cost: 1}, now},
		"peek":             {withCost(preparedWith(t, core.GCRA, l), 0), now},
		"refund":           {withCost(preparedWith(t, core.GCRA, l), -1), now},
		"window":           {preparedWith(t, core.FixedWindow, l), now},
		"two limits":       {preparedWith(t, core.GCRA, l, core.WithLimit(core.PerHour(100))), now},
		"penalty box":      {preparedWith(t, core.GCRA, l, core.WithBlockFor(time.Minute)), now},
		"settle's charge":  {withCharge(preparedWith(t, core.GCRA, l, core.WithDebt(3))), now},
		"negative time":    {preparedWith(t, core.GCRA, l), -1},
		"time past max":    {preparedWith(t, core.GCRA, l), core.MaxTime + 1},
		"limits changed":   {withLimits(preparedWith(t, core.GCRA, l), core.PerSecond(10)), now},
		"algorithm change": {withAlgorithm(preparedWith(t, core.GCRA, l), core.TokenBucket), now},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, ok := c.req.WordMeter(c.now)
			expect.False(t, ok)
		})
	}
}

func withCost(r core.TakeRequest, n int64) core.TakeRequest { r.Cost = n; return r }

func withCharge(r core.TakeRequest) core.TakeRequest { r.Charge = true; return r }

func withLimits(r core.TakeRequest, ls ...core.Limit) core.TakeRequest { r.Limits = ls; return r }

func withAlgorithm(r core.TakeRequest, a core.Algorithm) core.TakeRequest { r.Algorithm = a; return r }

// A PackedWindow decides exactly as AdvanceWindowWord and
// DecideWindowWord do, fixed and sliding, under a debt bound too.
func TestPackedWindowAgreesWithWindowWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	limits := []core.Limit{core.PerSecond(10), core.PerMinute(7), core.Every(500, 30*time.Second)}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, l := range limits {
			for _, opts := range [][]core.Option{nil, {core.WithDebt(2)}} {
				req := preparedWith(t, alg, l, opts...)
				pk, ok := req.WindowPacking()
				must.True(t, ok, "%s %s packs", alg, l)
				var word int64
				now := int64(1_700_000_000_000_000)
				for range 1000 {
					now += rng.Int64N(3 * l.Period.Microseconds() / l.Rate)
					req.Cost = 1 + rng.Int64N(l.Rate/2+1)
					pw, ok := req.PackedWindow(now)
					must.True(t, ok, "%s %s: a Limiter's plain spend is a PackedWindow", alg, l)
					expect.Equal(t, pk, pw.Packing(), "the packing")
					next := req.AdvanceWindowWord(word, now)
					var want, got core.Decision
					must.NoError(t, req.DecideWindowWord(&want, word, now))
					pw.Decide(&got, word, now)
					must.Equal(t, next, pw.Advance(word, now), "%s %s cost %d at %d: the word", alg, l, req.Cost, now)
					must.Equal(t, want, got, "%s %s cost %d at %d: the decision", alg, l, req.Cost, now)
					word = next
				}
			}
		}
	}
}

// PackedWindow covers a Limiter's plain spend of a packed window and
// nothing else.
func TestPackedWindowRefusesWhatItDoesNotCover(t *testing.T) {
	const now = int64(1_700_000_000_000_000)
	l := core.PerSecond(10)
	cases := map[string]struct {
		req core.TakeRequest
		now int64
	}{
		"built by hand":   {core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{l}, Cost: 1}, now},
		"peek":            {withCost(preparedWith(t, core.FixedWindow, l), 0), now},
		"refund":          {withCost(preparedWith(t, core.FixedWindow, l), -1), now},
		"meter":           {preparedWith(t, core.GCRA, l), now},
		"log":             {preparedWith(t, core.SlidingLog, l), now},
		"two limits":      {preparedWith(t, core.FixedWindow, l, core.WithLimit(core.PerHour(100))), now},
		"penalty box":     {preparedWith(t, core.FixedWindow, l, core.WithBlockFor(time.Minute)), now},
		"settle's charge": {withCharge(preparedWith(t, core.FixedWindow, l, core.WithDebt(3))), now},
		"calendar":        {preparedWith(t, core.FixedWindow, core.Monthly(100)), now},
		"does not pack":   {preparedWith(t, core.SlidingWindow, core.PerSecond(1_000_000)), now},
		"negative time":   {preparedWith(t, core.FixedWindow, l), -1},
		"time past max":   {preparedWith(t, core.FixedWindow, l), core.MaxTime + 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, ok := c.req.PackedWindow(c.now)
			expect.False(t, ok)
		})
	}
}

// A zero WordMeter or PackedWindow, one a store made without asking the
// request, decides nothing and never panics.
func TestZeroWordViewsDecideNothing(t *testing.T) {
	var wm core.WordMeter
	var pw core.PackedWindow
	d := core.Decision{Allowed: true, Remaining: 5}
	expect.Equal(t, int64(42), wm.Advance(42, 1))
	expect.Zero(t, wm.Unit())
	wm.Decide(&d, 42, 1)
	expect.Equal(t, core.Decision{}, d)
	d.Allowed = true
	expect.Equal(t, int64(42), pw.Advance(42, 1))
	expect.Equal(t, int64(-3), pw.Advance(-3, 1))
	pw.Decide(&d, 42, 1)
	expect.Equal(t, core.Decision{}, d)
}
