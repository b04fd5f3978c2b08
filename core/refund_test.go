package core_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// refundState gives back n admitted at adm from s under l at now, through
// TakeRequest.Decide as a store calls it, and returns the state it leaves.
func refundState(t *testing.T, alg core.Algorithm, s core.State, l core.Limit, n, adm, now int64) core.State {
	t.Helper()
	st := []core.State{clone(s)}
	req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}, Cost: -n, Now: time.UnixMicro(now)}
	if adm != 0 {
		req.Admitted = time.UnixMicro(adm)
	}
	var d core.Decision
	must.NoError(t, req.Decide(&d, st, now))
	peek, err := alg.ApplyAll([]core.State{clone(st[0])}, req.Limits, 0, now)
	must.NoError(t, err)
	expect.Equal(t, peek, d, "a refund replies as a peek of the state it leaves")
	return st[0]
}

func TestRefundMeters(t *testing.T) {
	l := core.PerSecond(1).WithBurst(5) // interval 1s, tau 5s
	now := hms(1, 0, 0)
	sec := us(time.Second)
	cases := []struct {
		name   string
		t      int64 // the state before
		n, adm int64
		want   int64
	}{
		{"two of three back", now + 3*sec, 2, now, now + sec},
		{"never past full", now + 3*sec, 10, now, now},
		{"more than the burst", now + 5*sec, math.MaxInt64, now, now},
		{"full already", now - sec, 1, now - 2*sec, now - sec},
		{"fresh key", 0, 1, now, 0},
		{"admitted within the refill time", now + 3*sec, 1, now - 5*sec + 1, now + 2*sec},
		{"admitted a refill time ago", now + 3*sec, 1, now - 5*sec, now + 3*sec},
		{"zero admission is now", now + 3*sec, 1, 0, now + 2*sec},
		{"admission after now is now", now + 3*sec, 1, now + 7*sec, now + 2*sec},
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket} {
		for _, c := range cases {
			t.Run(alg.String()+"/"+c.name, func(t *testing.T) {
				got := refundState(t, alg, core.State{T: c.t}, l, c.n, c.adm, now)
				expect.Equal(t, c.want, got.T)
			})
		}
	}
}

func TestRefundWindows(t *testing.T) {
	l := core.PerMinute(10)
	start := hms(1, 5, 0) // a window of the minute starts here
	now := start + us(20*time.Second)
	minute := us(time.Minute)
	cases := []struct {
		name         string
		alg          core.Algorithm
		before       core.State
		n, adm       int64
		wantN, wantP int64
	}{
		{"fixed: this window", core.FixedWindow, core.State{T: start, N: 3}, 2, start + 1, 1, 0},
		{"fixed: floor 0", core.FixedWindow, core.State{T: start, N: 3}, 9, start, 0, 0},
		{"fixed: the window before", core.FixedWindow, core.State{T: start, N: 3}, 1, start - 1, 3, 0},
		{"fixed: the state's window is over", core.FixedWindow, core.State{T: start - minute, N: 3}, 1, start - minute, 3, 0},
		{"sliding: current", core.SlidingWindow, core.State{T: start, N: 2, P: 4}, 1, now, 1, 4},
		{"sliding: previous", core.SlidingWindow, core.State{T: start, N: 2, P: 4}, 3, start - 1, 2, 1},
		{"sliding: previous, floor 0", core.SlidingWindow, core.State{T: start, N: 2, P: 4}, 9, start - minute, 2, 0},
		{"sliding: older", core.SlidingWindow, core.State{T: start, N: 2, P: 4}, 1, start - minute - 1, 2, 4},
		{"sliding: state's window is now the previous one", core.SlidingWindow, core.State{T: start - minute, N: 5}, 2, start - 1, 3, 0},
		{"sliding: state's window is older", core.SlidingWindow, core.State{T: start - 2*minute, N: 5}, 2, start - 2*minute, 5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := refundState(t, c.alg, c.before, l, c.n, c.adm, now)
			expect.Equal(t, c.before.T, got.T, "the window stays")
			expect.Equal(t, c.wantN, got.N, "count")
			expect.Equal(t, c.wantP, got.P, "previous count")
		})
	}
}

func TestRefundSlidingLog(t *testing.T) {
	l := core.PerMinute(10)
	t0 := hms(2, 0, 0)
	sec := us(time.Second)
	// A ring of 6 whose oldest entry sits at index 4, so removals wrap.
	ring := core.State{Log: []int64{t0 + 2*sec, t0 + 2*sec, t0 + 3*sec, 0, t0, t0 + sec}, Head: 4, N: 5}
	entries := func(s core.State) []int64 {
		out := make([]int64, 0, s.N)
		for i := range int(s.N) {
			out = append(out, s.Log[(s.Head+i)%len(s.Log)])
		}
		return out
	}
	cases := []struct {
		name   string
		n, adm int64
		now    int64
		want   []int64
	}{
		{"one at the admission", 1, t0 + 2*sec, t0 + 5*sec, []int64{t0, t0 + sec, t0 + 2*sec, t0 + 3*sec}},
		{"the admission's, then older", 3, t0 + 2*sec, t0 + 5*sec, []int64{t0, t0 + 3*sec}},
		{"never newer ones", 9, t0 + sec, t0 + 5*sec, []int64{t0 + 2*sec, t0 + 2*sec, t0 + 3*sec}},
		{"not the expired ones", 9, t0 + 2*sec, t0 + sec + us(time.Minute), []int64{t0, t0 + sec, t0 + 3*sec}},
		{"admission expired: nothing", 1, t0, t0 + us(time.Minute), []int64{t0, t0 + sec, t0 + 2*sec, t0 + 2*sec, t0 + 3*sec}},
		{"before every entry: nothing", 1, t0 - 1, t0 + 5*sec, []int64{t0, t0 + sec, t0 + 2*sec, t0 + 2*sec, t0 + 3*sec}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := refundState(t, core.SlidingLog, ring, l, c.n, c.adm, c.now)
			expect.Equal(t, c.want, entries(got))
		})
	}
}

// The lock-free path (AdvanceWord) leaves the state Decide does, for spends
// and refunds alike.
func TestAdvanceWordRefundsAsDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	limits := []core.Limit{core.PerSecond(1).WithBurst(5), core.Every(7, 1500*time.Millisecond), core.PerMinute(100).WithBurst(3)}
	now := hms(3, 0, 0)
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket} {
		for i := range 2000 {
			l := limits[i%len(limits)]
			tau := l.EmissionInterval().Microseconds() * l.EffectiveBurst()
			st := core.State{T: now - tau + rng.Int64N(3*tau)}
			req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}}
			if i%2 == 0 { // built by a Limiter, with its figures
				req = prepared(t, alg, l)
			}
			req.Cost, req.Now = -1-rng.Int64N(8), time.UnixMicro(now)
			if rng.IntN(4) > 0 {
				req.Admitted = time.UnixMicro(now - rng.Int64N(2*tau))
			}
			word := req.AdvanceWord(st.T, now)
			var d core.Decision
			states := []core.State{st}
			must.NoError(t, req.Decide(&d, states, now))
			must.Equal(t, states[0].T, word, "%s: T %d, refund %d admitted %s", alg, st.T, -req.Cost, req.Admitted)
		}
	}
}

func TestRefundBadRequests(t *testing.T) {
	now := hms(4, 0, 0)
	good := core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerSecond(2)}, Cost: -1, Now: time.UnixMicro(now)}
	cases := []struct {
		name string
		edit func(r *core.TakeRequest) []core.State
		now  int64
		want error
	}{
		{"states for no limit", func(r *core.TakeRequest) []core.State { return make([]core.State, 2) }, now, core.ErrInvalidLimit},
		{"bad algorithm", func(r *core.TakeRequest) []core.State { r.Algorithm = 0; return make([]core.State, 1) }, now, core.ErrInvalidAlgorithm},
		{"bad limit", func(r *core.TakeRequest) []core.State {
			r.Limits = []core.Limit{{Rate: 1}}
			return make([]core.State, 1)
		}, now, core.ErrInvalidLimit},
		{"time before the epoch", func(r *core.TakeRequest) []core.State { return make([]core.State, 1) }, -1, core.ErrClock},
		{"time after MaxTime", func(r *core.TakeRequest) []core.State { return make([]core.State, 1) }, core.MaxTime + 1, core.ErrClock},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := good
			states := c.edit(&req)
			var d core.Decision
			var err error
			must.NotPanics(t, func() { err = req.Decide(&d, states, c.now) })
			must.ErrorIs(t, err, c.want)
			expect.Equal(t, core.Decision{}, d)
			expect.Equal(t, int64(12345), req.AdvanceWord(12345, c.now), "a bad refund leaves the word alone")
		})
	}
	t.Run("a bad second limit changes no state", func(t *testing.T) {
		req := good
		req.Limits = []core.Limit{core.PerSecond(2), {Rate: 1}}
		states := []core.State{{T: now - now%1_000_000, N: 2}, {}}
		var d core.Decision
		must.ErrorIs(t, req.Decide(&d, states, now), core.ErrInvalidLimit)
		expect.Equal(t, int64(2), states[0].N)
	})
	t.Run("most negative cost", func(t *testing.T) {
		req := good
		req.Cost = math.MinInt64
		states := []core.State{{T: now - now%1_000_000, N: 2}}
		var d core.Decision
		must.NoError(t, req.Decide(&d, states, now))
		expect.Equal(t, int64(0), states[0].N, "gives back everything, not a negative amount")
	})
	t.Run("ApplyAll still refuses negative costs", func(t *testing.T) {
		_, err := core.GCRA.ApplyAll([]core.State{{}}, good.Limits, -1, now)
		expect.ErrorIs(t, err, core.ErrInvalidCost)
	})
}

// Spending allocates nothing on the memory store, as before refunds came,
// and neither does a refund.
func TestSpendAndRefundAllocateNothing(t *testing.T) {
	for _, alg := range []core.Algorithm{core.GCRA, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			clk := core.NewManualClock(time.UnixMicro(hms(5, 0, 0)))
			lim, err := core.NewLimiter(newMemStore(t), alg, core.PerSecond(1_000_000), core.WithClock(clk))
			must.NoError(t, err)
			ctx := context.Background()
			d, err := lim.Allow(ctx, "hot")
			must.NoError(t, err)
			must.True(t, d.Allowed)
			expect.Zero(t, testing.AllocsPerRun(100, func() { d, _ = lim.Allow(ctx, "hot") }), "spend")
			expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = lim.Refund(ctx, "hot", 1, d) }), "refund")
		})
	}
}
