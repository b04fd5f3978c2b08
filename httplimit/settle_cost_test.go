package httplimit

import (
	"context"
	"math"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// debtPolicy is a policy of alg under l with debt bound debt on a memory
// store, and the given options.
func debtPolicy(t *testing.T, alg core.Algorithm, l core.Limit, debt int64, opts ...Option) (*Policy, *core.ManualClock) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, alg, l, core.WithClock(clk), core.WithDebt(debt))
	must.NoError(t, err)
	p, err := New(lim, opts...)
	must.NoError(t, err)
	return p, clk
}

// answer serves one request under p whose handler sets X-Cost to cost
// (none when cost is ""), settles it with status 200 and finishes it.
func answer(p *Policy, cost string) (*httptest.ResponseRecorder, bool) {
	w := httptest.NewRecorder()
	pass, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	if !next {
		return w, false
	}
	if cost != "" {
		w.Header().Set("X-Cost", cost)
	}
	pass.Settle(200, w)
	w.WriteHeader(200)
	pass.Finish(200)
	return w, true
}

func TestSettleHeaderChargesAndGivesBack(t *testing.T) {
	rec := &recorder{}
	p, _ := debtPolicy(t, core.GCRA, core.PerMinute(10), 5, WithSettleHeader("x-cost"), WithObserver(rec))
	w, next := answer(p, "4")
	must.True(t, next)
	expect.Equal(t, "6", w.Header().Get(HeaderXRateLimitRemain), "the headers tell the state after the settle")
	w, _ = answer(p, "0")
	expect.Equal(t, "6", w.Header().Get(HeaderXRateLimitRemain), "a cost of 0 gives the reservation back")
	w, _ = answer(p, "9")
	expect.Equal(t, "0", w.Header().Get(HeaderXRateLimitRemain))
	expect.Equal(t, `"default";r=0;t=78`, w.Header().Get(HeaderRateLimit), "60s for the quota, 18s more for the debt of 3")
	w, next = answer(p, "1")
	expect.False(t, next, "a key in debt is denied")
	expect.Equal(t, "24", w.Header().Get("Retry-After"), "the debt counts in the Retry-After: 18s, and 6s for the request")
	var settled []int64
	for _, e := range rec.events {
		if e.Outcome == OutcomeSettled {
			settled = append(settled, e.Settled)
		}
	}
	expect.Equal(t, []int64{3, -1, 8}, settled)
}

func TestSettleHeaderBadValuesKeepTheReservation(t *testing.T) {
	bad := []string{"NaN", "1e999", "0x10", "-1", "+1", " 1", "1.5", "99999999999999999999", "9223372036854775808", "１"}
	for _, v := range bad {
		t.Run(v, func(t *testing.T) {
			rec := &recorder{}
			p, _ := debtPolicy(t, core.FixedWindow, core.PerMinute(10), 0, WithSettleHeader("X-Cost"), WithObserver(rec))
			w, next := answer(p, v)
			must.True(t, next)
			expect.Equal(t, "9", w.Header().Get(HeaderXRateLimitRemain), "the reservation stays")
			expect.Equal(t, int64(9), remaining(t, p, "192.0.2.1"), "never minted, never charged")
			last := rec.events[len(rec.events)-1]
			expect.Equal(t, OutcomeSettled, last.Outcome)
			expect.ErrorIs(t, last.Err, core.ErrInvalidCost)
		})
	}
	p, _ := debtPolicy(t, core.FixedWindow, core.PerMinute(10), 0, WithSettleHeader("X-Cost"))
	_, _ = answer(p, "")
	expect.Equal(t, int64(9), remaining(t, p, "192.0.2.1"), "no header: the reservation stays")
	_, _ = answer(p, strconv.FormatInt(math.MaxInt64, 10))
	expect.Equal(t, int64(0), remaining(t, p, "192.0.2.1"), "MaxInt64 spends what is left, and no more with no debt bound")
}

func TestSettleFunction(t *testing.T) {
	charge := WithSettle(func(status int, header func(string) string) (int64, bool) {
		if status >= 500 {
			return 0, false // keep the reservation
		}
		n, err := strconv.ParseInt(header("X-Tokens"), 10, 64)
		return n, err == nil
	})
	p, _ := debtPolicy(t, core.TokenBucket, core.PerMinute(100), 0, charge, WithCost(func(keyfuncs.Request) int64 { return 10 }))
	w := httptest.NewRecorder()
	pass, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	must.True(t, next)
	expect.Equal(t, "90", w.Header().Get(HeaderXRateLimitRemain), "a computed reservation of 10")
	w.Header().Set("X-Tokens", "25")
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, "75", w.Header().Get(HeaderXRateLimitRemain))

	neg := WithSettle(func(int, func(string) string) (int64, bool) { return -5, true })
	rec := &recorder{}
	p, _ = debtPolicy(t, core.GCRA, core.PerMinute(10), 0, neg, WithObserver(rec))
	_, _ = answer(p, "")
	expect.Equal(t, int64(9), remaining(t, p, "192.0.2.1"), "a negative cost keeps the reservation")
	expect.ErrorIs(t, rec.events[len(rec.events)-1].Err, core.ErrInvalidCost)
}

func TestSettleOptionsRefuseBadInput(t *testing.T) {
	lim, _ := debtPolicy(t, core.GCRA, core.PerMinute(10), 0)
	for _, o := range []Option{WithSettle(nil), WithSettleHeader(""), WithSettleHeader("X Cost"), WithSettleHeader("X-Cost\n"), WithRefund(nil)} {
		_, err := New(lim.Limiter(), o)
		expect.ErrorIs(t, err, core.ErrInvalidOption)
	}
	log, _ := debtPolicy(t, core.SlidingLog, core.PerMinute(10), 0)
	_, err := New(log.Limiter(), WithSettleHeader("X-Cost"))
	expect.ErrorIs(t, err, core.ErrInvalidOption, "the sliding log cannot charge after the response")
	_, err = New(log.Limiter(), WithSettle(func(int, func(string) string) (int64, bool) { return 0, true }))
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = New(log.Limiter(), WithRefund(successful))
	expect.NoError(t, err, "a refund it takes")
}

func TestParseCost(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "7": 7, "1000000": 1_000_000, "9223372036854775807": math.MaxInt64, "007": 7} {
		got, err := ParseCost(s)
		must.NoError(t, err, s)
		expect.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "NaN", "inf", "1e999", "0x10", "-0", "1_000", "9223372036854775808", "18446744073709551616"} {
		_, err := ParseCost(s)
		expect.ErrorIs(t, err, core.ErrInvalidCost, s)
	}
}

// A refund under WithRefund is a settle at 0: the later of WithRefund and
// WithSettleHeader is the policy's one settle.
func TestRefundIsASettle(t *testing.T) {
	p, _ := debtPolicy(t, core.FixedWindow, core.PerMinute(10), 0, WithSettleHeader("X-Cost"), WithRefund(successful))
	_, _ = answer(p, "5")
	expect.Equal(t, int64(10), remaining(t, p, "192.0.2.1"), "WithRefund, the later, settles at 0 and ignores the header")
}

func FuzzParseCost(f *testing.F) {
	for _, s := range []string{"0", "12", "NaN", "1e999", "0x10", "9223372036854775807", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseCost(s)
		if err != nil {
			return
		}
		m, perr := strconv.ParseInt(s, 10, 64)
		expect.NoError(t, perr)
		expect.Equal(t, m, n)
		expect.GreaterOrEqual(t, n, int64(0))
		expect.NotContains(t, s, "+")
	})
}

// A Group settles its settling member at the response header's cost and
// rewrites the group's headers; the other members keep what they spent.
func TestSettleHeaderInAGroup(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"tokens": 10, "all": 5}, []string{"tokens", "all"},
		map[string][]Option{"tokens": {WithSettleHeader("X-Cost")}})
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	w, pass, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	must.True(t, next)
	expect.Equal(t, `"tokens";r=9;t=6, "all";r=4;t=12`, w.Header().Get(HeaderRateLimit))
	w.Header().Set("X-Cost", "7")
	pass.Settle(200, w)
	pass.Finish(200)
	expect.Equal(t, `"tokens";r=3;t=42, "all";r=4;t=12`, w.Header().Get(HeaderRateLimit), "tokens settled at 7")
	expect.Equal(t, "3", w.Header().Get(HeaderXRateLimitRemain), "tokens governs after its settle")
	expect.Equal(t, int64(3), remaining(t, ps[0], "192.0.2.1:1"))
	expect.Equal(t, int64(4), remaining(t, ps[1], "192.0.2.1:1"), "all keeps its 1")
}
