package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// leasable are the algorithms a token lease applies to.
var leasable = []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.GCRA, core.TokenBucket}

// RunTokenLease checks a store's token leases (core.TokenLeaser, for
// core.WithTokenLease) on the caller's clock: grants equal to the
// Reference's, mixed with ordinary decisions, for every leasable algorithm;
// the bound (windows admit at most each limit's Rate per window, exactly
// Rate when every instance asks until refused; the meters at most Burst +
// Rate x (T + TTL) in any T) with 10 limiters x 8 goroutines; cold keys
// taking one call each and no lease; and bad leases refused. A store that
// is not a TokenLeaser is checked to be refused by WithTokenLease.
func RunTokenLease(t *testing.T, newStore NewStore) {
	if _, ok := newStore(t).(core.TokenLeaser); !ok {
		_, err := core.NewLimiter(newStore(t), core.GCRA, core.PerSecond(100), core.WithTokenLease(core.TokenLease{Max: 10, TTL: time.Second}))
		must.ErrorIs(t, err, core.ErrInvalidOption, "a store that leases nothing is refused")
		return
	}
	t.Run("Grants", func(t *testing.T) { runLeaseGrants(t, newStore) })
	t.Run("WindowExact", func(t *testing.T) { runLeaseWindowExact(t, newStore) })
	t.Run("MeterBound", func(t *testing.T) { runLeaseMeterBound(t, newStore) })
	t.Run("ColdKeys", func(t *testing.T) { runLeaseColdKeys(t, newStore) })
	t.Run("BadInput", func(t *testing.T) { runLeaseBadInput(t, newStore) })
}

// runLeaseGrants drives the store and the Reference through the same random
// leases, decisions and refunds, and demands the same answers.
func runLeaseGrants(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	for _, alg := range leasable {
		for si, limits := range limitSets(alg) {
			t.Run(fmt.Sprintf("%s/%d", alg, si), func(t *testing.T) {
				st, ref := newStore(t), NewReference()
				leaser := st.(core.TokenLeaser)
				rng := rand.New(rand.NewPCG(uint64(si), uint64(alg)))
				now := Start
				for i := range 200 {
					now = now.Add(time.Duration(rng.Int64N(int64(limits[0].Period / 4))))
					req := core.TakeRequest{Namespace: t.Name(), Key: scriptKeys[i%2], Algorithm: alg, Limits: limits, Cost: 1 + rng.Int64N(2), Now: now}
					if rng.IntN(4) == 0 { // an ordinary decision between leases
						want, err := ref.Take(ctx, req)
						must.NoError(t, err)
						got, err := st.Take(ctx, req)
						must.NoError(t, err)
						expect.Equal(t, want, got, "step", i, "take")
						continue
					}
					want := req.Cost + rng.Int64N(limits[0].Rate)
					wg, err := ref.LeaseTokens(ctx, req, want, limits[0].Period/2)
					must.NoError(t, err)
					gg, err := leaser.LeaseTokens(ctx, req, want, limits[0].Period/2)
					must.NoError(t, err)
					expect.Equal(t, wg, gg, "step", i, "lease of", req.Cost, "to", want)
				}
			})
		}
	}
}

// leaseFleet returns n limiters of alg and limit sharing one store, each
// leasing up to max for ttl, on one manual clock.
func leaseFleet(t *testing.T, newStore NewStore, n int, alg core.Algorithm, limit core.Limit, tl core.TokenLease) ([]*core.Limiter, *core.ManualClock) {
	t.Helper()
	st, clk := newStore(t), core.NewManualClock(Start)
	ls := make([]*core.Limiter, n)
	for i := range ls {
		var err error
		ls[i], err = core.NewLimiter(st, alg, limit, core.WithClock(clk), core.WithNamespace(t.Name()), core.WithTokenLease(tl))
		must.NoError(t, err)
		t.Cleanup(func() { expect.NoError(t, ls[i].ReturnLeasedTokens(context.Background())) })
	}
	return ls, clk
}

// askUntilLanded asks "hot" on every limiter again, at the same instant,
// until want more are admitted or a second has passed, and returns how many
// were: a lease call still on its way after the last round brings tokens
// that the requests it kept waiting for were refused at the key's limit
// (false denials, within the bound), which its instance's next requests
// spend. The second is real time for the background calls to land; the
// limiters' clock does not move.
func askUntilLanded(t *testing.T, ls []*core.Limiter, clk *core.ManualClock, want int) int {
	t.Helper()
	got := 0
	for deadline := time.Now().Add(time.Second); got < want && time.Now().Before(deadline); {
		at, err := askAll(ls, clk, "hot", 1)
		must.NoError(t, err)
		got += len(at)
		if got < want {
			time.Sleep(time.Millisecond)
		}
	}
	return got
}

// askAll has every limiter's g goroutines ask key once each, and returns
// the instants (µs) of the admissions.
func askAll(ls []*core.Limiter, clk *core.ManualClock, key string, g int) ([]int64, error) {
	var mu sync.Mutex
	var at []int64
	var firstErr error
	var wg sync.WaitGroup
	for _, l := range ls {
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				now := core.Micros(clk.Now())
				d, err := l.Allow(context.Background(), key)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil && d.Allowed {
					at = append(at, now)
				}
			}()
		}
	}
	wg.Wait()
	return at, firstErr
}

// runLeaseWindowExact: limit 100 per minute, 10 instances x 8 goroutines,
// leases of up to 20: exactly 100 admitted in the window, then refused on
// every instance; the next window admits 100 again.
func runLeaseWindowExact(t *testing.T, newStore NewStore) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			ls, clk := leaseFleet(t, newStore, 10, alg, core.PerMinute(100), core.TokenLease{Max: 20, TTL: time.Minute})
			clk.Set(Start.Truncate(time.Minute).Add(time.Second))
			for w := range 2 {
				admitted := 0
				for range 40 { // 40 rounds of 80 requests, 20 s of the window
					at, err := askAll(ls, clk, "hot", 8)
					must.NoError(t, err)
					admitted += len(at)
					clk.Advance(500 * time.Millisecond)
				}
				limit := 100
				if alg == core.SlidingWindow && w == 1 {
					// The last round asks 20.5 s in, where the previous
					// window's 100 weigh 39.5/60: 100 - 65.8 leaves 34.
					limit = 34
				}
				admitted += askUntilLanded(t, ls, clk, limit-admitted)
				expect.Equal(t, limit, admitted, "window %d", w)
				for _, l := range ls[:limit/100*len(ls)] { // a full window refuses everywhere
					d, err := l.Allow(context.Background(), "hot")
					must.NoError(t, err)
					expect.False(t, d.Allowed, "refused on every instance once the window's quota is spent")
				}
				clk.Set(Start.Truncate(time.Minute).Add(time.Duration(w+1)*time.Minute + time.Second))
			}
		})
	}
}

// runLeaseMeterBound: GCRA and the token bucket at 1000/s, 10 instances x
// 8 goroutines asking 80,000/s, leases of up to 50 for 50 ms: at most
// Burst + Rate x (T + TTL) admitted in any T.
func runLeaseMeterBound(t *testing.T, newStore NewStore) {
	const tau = 50 * time.Millisecond
	limit := core.PerSecond(1000)
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket} {
		t.Run(alg.String(), func(t *testing.T) {
			ls, clk := leaseFleet(t, newStore, 10, alg, limit, core.TokenLease{Max: 50, TTL: tau})
			var at []int64
			for range 300 { // 0.3 s in 1 ms steps
				got, err := askAll(ls, clk, "hot", 8)
				must.NoError(t, err)
				at = append(at, got...)
				clk.Advance(time.Millisecond)
			}
			slices.Sort(at)
			for _, T := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
				bound := limit.Burst + int64(float64(limit.Rate)*(T+tau).Seconds())
				most := 0
				for i := range at {
					j, _ := slices.BinarySearch(at, at[i]+T.Microseconds())
					most = max(most, j-i)
				}
				expect.True(t, int64(most) <= bound, fmt.Sprintf("%d admitted within %s, bound %d", most, T, bound))
			}
			expect.True(t, len(at) >= 1000+250, fmt.Sprint(len(at), " admitted in 0.3 s at 1000/s with a burst of 1000"))
		})
	}
}

// runLeaseColdKeys: keys asked for once each take one store call each and
// never a lease.
func runLeaseColdKeys(t *testing.T, newStore NewStore) {
	ls, _ := leaseFleet(t, newStore, 1, core.GCRA, core.PerSecond(100), core.TokenLease{Max: 50, TTL: 100 * time.Millisecond, Keys: 256})
	for i := range 2000 {
		d, err := ls[0].Allow(context.Background(), fmt.Sprint("cold-", i))
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
	s := ls[0].TokenLeaseStats()
	expect.Equal(t, core.TokenLeaseStats{Decisions: 2000, Calls: 2000}, s, "one call per cold key, no lease")
}

// runLeaseBadInput: leases a store cannot grant exactly, or of costs out of
// range, are refused with core's errors.
func runLeaseBadInput(t *testing.T, newStore NewStore) {
	leaser := newStore(t).(core.TokenLeaser)
	ok := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: Start}
	with := func(f func(r *core.TakeRequest)) core.TakeRequest { r := ok; f(&r); return r }
	tests := []struct {
		name string
		req  core.TakeRequest
		want int64
		ttl  time.Duration
		err  error
	}{
		{"zero cost", with(func(r *core.TakeRequest) { r.Cost = 0 }), 5, time.Second, core.ErrInvalidCost},
		{"want below the cost", with(func(r *core.TakeRequest) { r.Cost = 3 }), 2, time.Second, core.ErrInvalidCost},
		{"sliding log", with(func(r *core.TakeRequest) { r.Algorithm = core.SlidingLog }), 5, time.Second, core.ErrInvalidOption},
		{"leaky bucket", with(func(r *core.TakeRequest) { r.Algorithm = core.LeakyBucket }), 5, time.Second, core.ErrInvalidOption},
		{"calendar", with(func(r *core.TakeRequest) { r.Algorithm, r.Limits = core.FixedWindow, []core.Limit{core.Daily(100)} }), 5, time.Second, core.ErrInvalidOption},
		{"penalty box", with(func(r *core.TakeRequest) { r.BlockFor = time.Minute }), 5, time.Second, core.ErrInvalidOption},
		{"zero ttl", ok, 5, 0, core.ErrInvalidOption},
		{"ttl longer than the period", ok, 5, 2 * time.Second, core.ErrInvalidOption},
		{"no limits", with(func(r *core.TakeRequest) { r.Limits = nil }), 5, time.Second, core.ErrInvalidLimit},
		{"invalid limit", with(func(r *core.TakeRequest) { r.Limits = []core.Limit{{Rate: 5}} }), 5, time.Second, core.ErrInvalidLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := leaser.LeaseTokens(context.Background(), tt.req, tt.want, tt.ttl)
			must.ErrorIs(t, err, tt.err)
			expect.Equal(t, core.TokenGrant{}, g)
		})
	}
}
