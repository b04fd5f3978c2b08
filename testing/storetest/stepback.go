package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// stepBackLimits are the limit sets the clock-step cases run under: one
// limit, and two (a step back of a millisecond leaves the second's meter
// within its bound, a longer one does not, and it too reads as empty).
var stepBackLimits = [][]core.Limit{
	{core.PerSecond(10)},
	{core.PerSecond(10), core.PerMinute(100).Named("minute")},
}

// RunClockStepsBack drains a key, steps the clock back (a Redis failover to
// a server whose clock is behind, a VM restored from a snapshot) and demands
// what core promises: no quota minted at the step, a key that recovers at
// its normal pace from the new now (10/s: a meter admits one request 100 ms
// after the step), never one locked out for the size of the step; a peek
// that writes nothing, a denied spend that writes the rebase, and a refund
// that never mints. Every decision must also equal the reference's.
func RunClockStepsBack(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		for i, limits := range stepBackLimits {
			for _, back := range []time.Duration{time.Millisecond, time.Hour, 400 * 24 * time.Hour} {
				t.Run(fmt.Sprintf("%s/%d/%s", alg, i, back), func(t *testing.T) {
					stepBack(t, newStore(t), alg, limits, back)
				})
			}
		}
	}
}

// stepPair takes one request from the store and from the reference and
// demands the same decision.
type stepPair struct {
	t       *testing.T
	st, ref core.Store
	req     core.TakeRequest
}

func (p *stepPair) take(cost int64, at time.Time, admitted time.Time) core.Decision {
	p.t.Helper()
	req := p.req
	req.Cost, req.Now, req.Admitted = cost, at, admitted
	want, err := p.ref.Take(context.Background(), req)
	must.NoError(p.t, err)
	got, err := p.st.Take(context.Background(), req)
	must.NoError(p.t, err)
	must.Equal(p.t, want, got, "cost %d at %s", cost, at.Format(time.RFC3339Nano))
	return got
}

func stepBack(t *testing.T, st core.Store, alg core.Algorithm, limits []core.Limit, back time.Duration) {
	p := &stepPair{t: t, st: st, ref: NewReference(), req: core.TakeRequest{
		Key: "stepped", Namespace: "clock-steps-back", Algorithm: alg, Limits: limits,
	}}
	for range 10 {
		must.True(t, p.take(1, Start, time.Time{}).Allowed)
	}
	at := Start.Add(-back)
	peek := p.take(0, at, time.Time{})
	expect.True(t, peek.Allowed, "a peek is allowed")
	expect.Zero(t, peek.Remaining, "no quota minted at the step")
	d := p.take(1, at, time.Time{})
	must.False(t, d.Allowed, "no quota minted at the step")
	expect.LessOrEqual(t, d.RetryAfter, 2*time.Second, "recovers at its normal pace, not after the step")
	if alg.OneWord() && len(limits) == 1 {
		expect.Equal(t, 100*time.Millisecond, d.RetryAfter, "an empty meter at the new now")
	}
	if alg.OneWord() {
		expect.LessOrEqual(t, d.RetryAfter, limits[len(limits)-1].EmissionInterval(), "empty meters at the new now")
	}
	at = at.Add(d.RetryAfter)
	d = p.take(1, at, time.Time{})
	expect.True(t, d.Allowed, "admitted once Retry-After has passed")
	// A refund of three of the drained requests, admitted at Start, now in
	// the future: no key ever holds more than a fresh one, and a meter no
	// more than it gave back.
	r := p.take(-3, at, Start)
	expect.LessOrEqual(t, r.Remaining, core.Algorithm.Capacity(alg, limits[0]), "a refund never mints")
	if alg.OneWord() {
		expect.LessOrEqual(t, r.Remaining, int64(3), "a refund never mints")
		d = p.take(4, at, time.Time{})
		expect.False(t, d.Allowed, "no more than the refund gave back")
	}
}
