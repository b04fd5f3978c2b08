package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// NewStore makes a fresh, empty store for one test. It registers its own
// cleanup (t.Cleanup) and fails the test when it cannot make the store.
type NewStore func(t *testing.T) core.Store

// Start is the instant the scripted sequences begin: deliberately not on a
// window boundary of any period the suite uses.
var Start = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// Run runs the whole conformance suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	t.Run("Scripted", func(t *testing.T) { RunScripted(t, newStore) })
	t.Run("Concurrent", func(t *testing.T) { RunConcurrent(t, newStore) })
	t.Run("Isolation", func(t *testing.T) { RunIsolation(t, newStore) })
	t.Run("BadInput", func(t *testing.T) { RunBadInput(t, newStore) })
	t.Run("Limiter", func(t *testing.T) { RunLimiter(t, newStore) })
	t.Run("Refunds", func(t *testing.T) { RunRefunds(t, newStore) })
	t.Run("ClockStepsBack", func(t *testing.T) { RunClockStepsBack(t, newStore) })
	t.Run("Edits", func(t *testing.T) { RunEdits(t, newStore) })
	t.Run("Penalty", func(t *testing.T) { RunPenalty(t, newStore) })
	t.Run("Calendar", func(t *testing.T) { RunCalendar(t, newStore) })
	t.Run("InFlight", func(t *testing.T) { RunInFlight(t, newStore) })
	t.Run("Settle", func(t *testing.T) { RunSettle(t, newStore) })
	t.Run("TokenLease", func(t *testing.T) { RunTokenLease(t, newStore) })
	t.Run("MicrosTaker", func(t *testing.T) { RunMicrosTaker(t, newStore) })
}

// limitSets are the limit configurations every algorithm is driven with.
func limitSets(alg core.Algorithm) [][]core.Limit {
	sets := [][]core.Limit{
		{core.PerSecond(3)},
		{core.PerMinute(10)},
		{core.Every(7, 1500*time.Millisecond)},
		{core.PerSecond(3), core.PerMinute(10).Named("minute")},
	}
	if alg.OneWord() {
		sets = append(sets,
			[]core.Limit{core.PerSecond(3).WithBurst(1)},
			[]core.Limit{core.Every(5, 200*time.Millisecond).WithBurst(10)},
			[]core.Limit{core.PerSecond(2).WithBurst(4), core.PerMinute(30).WithBurst(8).Named("minute")},
		)
	}
	return sets
}

// Keys the scripts use: short, unicode, with Redis hash-tag braces and
// separators, and a 10 KB API key.
var scriptKeys = []string{"a", "b", "ключ", "{tag}:x", strings.Repeat("k", 10<<10)}

type step struct {
	at       time.Time
	key      string
	cost     int64     // negative: a refund
	admitted time.Time // a refund's admission
}

// refundAdmission is the admission instant of a refund of cost appended to
// steps: one of the last within steps' instants, seven times in eight, else
// none (zero: the refund's own instant); zero for a spend or a peek.
func refundAdmission(rng *rand.Rand, steps []step, cost int64, within int) time.Time {
	if cost < 0 && len(steps) > 0 && rng.IntN(8) > 0 {
		return steps[len(steps)-1-rng.IntN(min(len(steps), within))].at
	}
	return time.Time{}
}

// agree decides req on ref and st and demands the same decision (step n of
// a script), which it returns.
func agree(t *testing.T, st, ref core.Store, n int, req core.TakeRequest) core.Decision {
	t.Helper()
	ctx := context.Background()
	want, err := ref.Take(ctx, req)
	must.NoError(t, err)
	got, err := st.Take(ctx, req)
	must.NoError(t, err, "step %d", n)
	must.Equal(t, want, got, "step %d: %s under %v key %.8q cost %d at %s", n, req.Algorithm, req.Limits, req.Key, req.Cost, req.Now.Format(time.RFC3339Nano))
	return got
}

// script makes a reproducible random sequence of requests: bursts at one
// instant, gaps around the emission interval, whole periods, a clock that
// steps backwards, a jump of a year, and refunds of costs admitted at an
// earlier step's instant (or with no instant).
func script(seed uint64, limits []core.Limit, n int) []step {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	interval := limits[0].EmissionInterval()
	period := limits[0].Period
	capacity := limits[0].EffectiveBurst()
	now := Start
	steps := make([]step, 0, n)
	for range n {
		switch r := rng.IntN(100); {
		case r < 45: // same instant: a burst
		case r < 80:
			now = now.Add(time.Duration(rng.Int64N(int64(2*interval)/1000+1)) * time.Microsecond)
		case r < 90:
			now = now.Add(time.Duration(rng.Int64N(int64(period)/1000+1)) * time.Microsecond)
		case r < 95:
			now = now.Add(period + time.Duration(rng.IntN(3))*period)
		case r < 99:
			now = now.Add(-time.Duration(rng.Int64N(int64(interval)/1000+1)) * time.Microsecond)
		default:
			now = now.Add(365 * 24 * time.Hour)
		}
		cost := int64(1)
		switch r := rng.IntN(100); {
		case r < 8:
			cost = 0
		case r < 18:
			cost = 2
		case r < 23:
			cost = 3
		case r < 25:
			cost = capacity + 1
		case r < 33:
			cost = -1 - rng.Int64N(3)
		}
		admitted := refundAdmission(rng, steps, cost, 20) // before the key: the scripts' order of draws
		steps = append(steps, step{at: now, key: scriptKeys[rng.IntN(len(scriptKeys))], cost: cost, admitted: admitted})
	}
	return steps
}

// RunScripted drives every algorithm with every limit set through random
// scripts of spends, peeks and refunds, and demands, decision by decision,
// what the reference decides.
func RunScripted(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		for i, limits := range limitSets(alg) {
			t.Run(fmt.Sprintf("%s/%d", alg, i), func(t *testing.T) {
				st, ref := newStore(t), NewReference()
				ns := fmt.Sprintf("scripted-%s-%d", alg, i)
				for n, s := range script(uint64(i)+uint64(alg)<<8, limits, 300) {
					agree(t, st, ref, n, core.TakeRequest{Key: s.key, Namespace: ns, Algorithm: alg, Limits: limits, Cost: s.cost, Now: s.at, Admitted: s.admitted})
				}
			})
		}
	}
}

// RunConcurrent has 64 goroutines hammer one key (each with its own requests
// at one instant) and demands that exactly the limit is admitted, for every
// algorithm, under one limit and under two.
func RunConcurrent(t *testing.T, newStore NewStore) {
	cases := []struct {
		name   string
		limits []core.Limit
		want   int64
	}{
		{"one limit", []core.Limit{core.Every(100, 10*time.Second)}, 100},
		{"two limits", []core.Limit{core.Every(100, 10*time.Second), core.PerMinute(60).Named("minute")}, 60},
	}
	for _, alg := range core.Algorithms() {
		for _, c := range cases {
			t.Run(alg.String()+"/"+c.name, func(t *testing.T) {
				st := newStore(t)
				req := core.TakeRequest{Key: "hot", Namespace: "concurrent", Algorithm: alg, Limits: c.limits, Cost: 1, Now: Start}
				var admitted, denied atomic.Int64
				var wg sync.WaitGroup
				for range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 5 {
							d, err := st.Take(context.Background(), req)
							if !expect.NoError(t, err) {
								return
							}
							if d.Allowed {
								admitted.Add(1)
							} else {
								denied.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				expect.Equal(t, c.want, admitted.Load(), "admitted")
				expect.Equal(t, 64*5-c.want, denied.Load(), "denied")
			})
		}
	}
}

// RunIsolation checks that namespaces, keys, algorithms and numbers of
// limits never share state, and that Reset (when the store has it) forgets a key.
func RunIsolation(t *testing.T, newStore NewStore) {
	st := newStore(t)
	ctx := context.Background()
	base := core.TakeRequest{Key: "k", Namespace: "iso", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(1)}, Cost: 1, Now: Start}
	d, err := st.Take(ctx, base)
	must.NoError(t, err)
	must.True(t, d.Allowed)
	d, err = st.Take(ctx, base)
	must.NoError(t, err)
	must.False(t, d.Allowed, "the same request again is denied")

	others := map[string]core.TakeRequest{}
	r := base
	r.Namespace = "iso2"
	others["namespace"] = r
	r = base
	r.Key = "k2"
	others["key"] = r
	r = base
	r.Algorithm = core.SlidingWindow
	others["algorithm"] = r
	r = base
	r.Limits = []core.Limit{core.PerMinute(1).WithBurst(1), core.PerHour(5)}
	others["number of limits"] = r
	for name, req := range others {
		d, err := st.Take(ctx, req)
		must.NoError(t, err, name)
		expect.True(t, d.Allowed, "a different %s has its own state", name)
	}
	if rs, ok := st.(core.Resetter); ok {
		must.NoError(t, rs.Reset(ctx, base))
		d, err = st.Take(ctx, base)
		must.NoError(t, err)
		expect.True(t, d.Allowed, "after Reset the key starts fresh")
	}
}

// RunBadInput feeds requests no store can decide and demands a clear error,
// never a panic and never an admission.
func RunBadInput(t *testing.T, newStore NewStore) {
	st := newStore(t)
	ctx := context.Background()
	good := core.TakeRequest{Key: "bad", Namespace: "bad", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: Start}
	cases := map[string]func(r *core.TakeRequest){
		"refund at bad time": func(r *core.TakeRequest) { r.Cost, r.Now = -1, time.Unix(-5, 0) },
		"no limits":          func(r *core.TakeRequest) { r.Limits = nil },
		"zero rate":          func(r *core.TakeRequest) { r.Limits = []core.Limit{{Rate: 0, Period: time.Second}} },
		"negative period":    func(r *core.TakeRequest) { r.Limits = []core.Limit{{Rate: 1, Period: -time.Second}} },
		"negative burst":     func(r *core.TakeRequest) { r.Limits = []core.Limit{{Rate: 1, Period: time.Second, Burst: -1}} },
		"unknown algorithm":  func(r *core.TakeRequest) { r.Algorithm = 0 },
		"time before epoch":  func(r *core.TakeRequest) { r.Now = time.Unix(-5, 0) },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			req := good
			mutate(&req)
			var d core.Decision
			var err error
			must.NotPanics(t, func() { d, err = st.Take(ctx, req) })
			must.Error(t, err)
			expect.False(t, d.Allowed)
		})
	}
	t.Run("cost above capacity", func(t *testing.T) {
		req := good
		req.Cost = 2
		d, err := st.Take(ctx, req)
		must.NoError(t, err)
		expect.False(t, d.Allowed)
		expect.True(t, d.Exceeds)
		expect.Positive(t, d.RetryAfter)
		req.Cost = 1
		d, err = st.Take(ctx, req)
		must.NoError(t, err)
		expect.True(t, d.Allowed, "the oversized request spent nothing")
	})
}
