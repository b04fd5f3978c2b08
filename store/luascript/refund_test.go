package luascript

import (
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// TestEncodeRefund: a refund sends its negative cost and, after the limits'
// figures, the admission's age, now and the TTL floor (always, for a refund),
// and its announcement's channel and payload; a spend sends no age.
func TestEncodeRefund(t *testing.T) {
	limits := []core.Limit{core.PerSecond(10), core.PerMinute(100)}
	cases := []struct {
		name     string
		cost     int64
		admitted time.Time
		opts     []Option
		wantArgs []string
	}{
		{"spend", 1, time.Time{}, nil, []string{"1", "100000", "1000000", "600000", "60000000"}},
		{"refund on Redis's clock", -3, t0.Add(-1500 * time.Millisecond), nil,
			[]string{"-3", "100000", "1000000", "600000", "60000000", "1500000", "-1", "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"refund on the caller's clock", -3, t0.Add(-time.Second), []Option{WithCallerClock()},
			[]string{"-3", "100000", "1000000", "600000", "60000000", "1000000", itoa(t0.UnixMicro()), "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"refund admitted now", -1, time.Time{}, nil, []string{"-1", "100000", "1000000", "600000", "60000000", "0", "-1", "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"sliding log on Redis's clock: slack", -1, t0.Add(-1500 * time.Millisecond), nil, []string{"-1", "10", "1000000", "100", "60000000", "1400000", "-1", "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"sliding log on the caller's clock: none", -1, t0.Add(-1500 * time.Millisecond), []Option{WithCallerClock()},
			[]string{"-1", "10", "1000000", "100", "60000000", "1500000", itoa(t0.UnixMicro()), "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"refund admitted after now", -1, t0.Add(time.Hour), nil, []string{"-1", "100000", "1000000", "600000", "60000000", "0", "-1", "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alg := core.GCRA
			if strings.HasPrefix(c.name, "sliding log") {
				alg = core.SlidingLog
			}
			req := core.TakeRequest{Key: "k", Algorithm: alg, Limits: limits, Cost: c.cost, Now: t0, Admitted: c.admitted}
			rec, err := encode(t, req, c.opts...)
			must.NoError(t, err)
			expect.Equal(t, c.wantArgs, rec.args)
		})
	}
}

// TestDecodeRefund: a refund's reply is the states it left, decoded as a
// peek of them.
func TestDecodeRefund(t *testing.T) {
	now := t0.UnixMicro()
	limit := core.PerSecond(1).WithBurst(3)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{limit}, Cost: -1, Now: t0}
	d, err := decode(req, []int64{1, now, now + 2_000_000})
	must.NoError(t, err)
	peek, err := core.GCRA.ApplyAll([]core.State{{T: now + 2_000_000}}, req.Limits, 0, now)
	must.NoError(t, err)
	expect.Equal(t, peek, d)
	expect.Equal(t, int64(1), d.Remaining)
}

// TestRefundForgetsCachedDenial: a refund frees quota, so this store's
// cached denial of the key goes.
func TestRefundForgetsCachedDenial(t *testing.T) {
	rec := &recorder{reply: []int64{-1 - 1_000_000}} // denied, a second owed
	s, err := New(rec, WithCallerClock())
	must.NoError(t, err)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: t0}
	d, err := s.Take(bg, req)
	must.NoError(t, err)
	must.False(t, d.Allowed)
	_, err = s.Take(bg, req)
	must.NoError(t, err)
	must.Equal(t, 1, rec.calls, "the denial is cached")

	refund := req
	refund.Cost = -1
	rec.reply = []int64{0}
	_, err = s.Take(bg, refund)
	must.NoError(t, err)
	expect.Equal(t, 2, rec.calls, "a refund goes to Redis")

	rec.reply = []int64{0}
	d, err = s.Take(bg, req)
	must.NoError(t, err)
	expect.True(t, d.Allowed)
	expect.Equal(t, 3, rec.calls, "after the refund the spend asks Redis again")
}
