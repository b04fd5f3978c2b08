package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// packs reports whether the store keeps alg's state under l in one word.
func packs(alg core.Algorithm, l core.Limit) bool {
	_, ok := (&core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}}).WindowPacking()
	return ok
}

// edgeLimits are limits on both sides of where the sliding window's state
// stops packing into a word (the fixed window's always packs), from one a
// microsecond to the longest period: the largest rate that packs, and the
// next, which the store keeps in an entry.
func edgeLimits(t *testing.T) []core.Limit {
	t.Helper()
	limits := []core.Limit{
		core.PerSecond(32767), core.PerSecond(32768),
		core.PerMinute(262143), core.PerMinute(262144),
		core.PerHour(2097151), core.PerHour(2097152),
		core.Every(1<<28, core.MaxPeriod), core.Every(1<<29, core.MaxPeriod),
		core.Every(1, time.Microsecond), core.Every(1000, time.Millisecond),
		core.Every(1<<40, (1<<40)*time.Microsecond),
	}
	for i := 0; i < 8; i += 2 {
		must.True(t, packs(core.SlidingWindow, limits[i]), "%s packs", limits[i])
		must.False(t, packs(core.SlidingWindow, limits[i+1]), "%s does not pack", limits[i+1])
	}
	return limits
}

// edgeScript is a random sequence of requests under l: bursts, crawls,
// windows crossed, a clock that steps back, jumps to the first windows and
// to the last the algorithms accept (the largest window index a word holds),
// costs up to the rate and beyond it, peeks, and refunds of earlier
// admissions.
func edgeScript(rng *rand.Rand, alg core.Algorithm, l core.Limit, n int) []core.TakeRequest {
	period := l.Period
	now := storetest.Start
	maxTime := time.UnixMicro(core.MaxTime).UTC()
	var past []time.Time
	reqs := make([]core.TakeRequest, 0, n)
	for range n {
		switch r := rng.IntN(100); {
		case r < 40:
		case r < 70:
			now = now.Add(time.Duration(rng.Int64N(max(1, int64(period)/l.Rate*3))))
		case r < 85:
			now = now.Add(time.Duration(rng.Int64N(3 * int64(period))))
		case r < 93:
			now = now.Add(-time.Duration(rng.Int64N(2*int64(period) + 1)))
		case r < 96:
			now = maxTime.Add(-time.Duration(rng.Int64N(3 * int64(period))))
		default:
			now = time.UnixMicro(0).Add(time.Duration(rng.Int64N(3 * int64(period))))
		}
		now = time.UnixMicro(min(max(core.Micros(now), 0), core.MaxTime))
		past = append(past, now)
		req := core.TakeRequest{Key: fmt.Sprint("k", rng.IntN(3)), Algorithm: alg, Limits: []core.Limit{l}, Cost: 1, Now: now}
		switch r := rng.IntN(100); {
		case r < 15:
			req.Cost = rng.Int64N(l.Rate + 1)
		case r < 22:
			req.Cost = l.Rate
		case r < 28:
			req.Cost = l.Rate + 1
		case r < 36:
			req.Cost = 0
		case r < 50:
			req.Cost = -1 - rng.Int64N(l.Rate)
			req.Admitted = past[len(past)-1-rng.IntN(min(len(past), 30))]
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// The windows decide exactly as the reference store (core's Decide on plain
// States) does, decision by decision, packed into a word or kept in an entry,
// at the edge of what packs and from the first window to the last.
func TestWindowsDecideAsReferenceAtThePackingEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 13))
	ctx := context.Background()
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, l := range edgeLimits(t) {
			t.Run(fmt.Sprintf("%s/%s/packed=%v", alg, l, packs(alg, l)), func(t *testing.T) {
				st := newStore(t, memory.WithShards(1), memory.WithSweepInterval(0))
				ref := storetest.NewReference()
				for n, req := range edgeScript(rng, alg, l, 500) {
					want, err := ref.Take(ctx, req)
					must.NoError(t, err)
					got, err := st.Take(ctx, req)
					must.NoError(t, err, "step %d", n)
					must.Equal(t, want, got, "step %d: %s cost %d at %d", n, req.Key, req.Cost, core.Micros(req.Now))
				}
			})
		}
	}
}

// Many goroutines spend on one key, window after window: exactly Rate is
// admitted in each window of the fixed window, whatever the instants within
// it, and in each window of the sliding window exactly what the reference
// admits at the window's instant. Run with -race.
func TestWindowsAdmitExactlyRatePerWindow(t *testing.T) {
	cases := []struct {
		limit    core.Limit
		requests int
		cost     int64
	}{
		{core.PerSecond(100), 320, 1},
		{core.PerSecond(10000), 20000, 1}, // enough racing swaps that one lost would show
		{core.PerSecond(32767), 320, 204}, // the largest sliding window that packs
		{core.PerSecond(32768), 320, 204}, // the smallest that does not: an entry
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", alg, c.limit), func(t *testing.T) {
				st := newStore(t, memory.WithSweepInterval(0))
				ref := storetest.NewReference()
				ctx := context.Background()
				base := storetest.Start.Truncate(time.Second)
				req := core.TakeRequest{Key: "hot", Algorithm: alg, Limits: []core.Limit{c.limit}, Cost: c.cost}
				for w := range 3 {
					start := base.Add(time.Duration(w) * time.Second)
					offset := time.Duration(w*150) * time.Millisecond // the sliding window's instant
					got := spendConcurrently(t, st, req, start, offset, c.requests)
					want := int64(0)
					req.Now = start.Add(offset)
					for range c.requests {
						if d, err := ref.Take(ctx, req); expect.NoError(t, err) && d.Allowed {
							want++
						}
					}
					if alg == core.FixedWindow {
						expect.Equal(t, c.limit.Rate/c.cost, want, "window %d: the reference admits Rate", w)
					}
					expect.Equal(t, want, got, "window %d", w)
				}
			})
		}
	}
}

// spendConcurrently sends n requests like req from 8 goroutines within the
// window starting at start, and returns how many were admitted: the fixed
// window's at random instants of the window, the sliding window's all at
// start+offset (its admissions depend on the instant).
func spendConcurrently(t *testing.T, st *memory.Store, req core.TakeRequest, start time.Time, offset time.Duration, n int) int64 {
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), uint64(start.UnixNano())))
			r := req
			for range n / 8 {
				r.Now = start.Add(offset)
				if req.Algorithm == core.FixedWindow {
					r.Now = start.Add(time.Duration(rng.Int64N(int64(req.Limits[0].Period))))
				}
				d, err := st.Take(context.Background(), r)
				if !expect.NoError(t, err) {
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return admitted.Load()
}

// A decision on a key the store holds allocates nothing, on every path: a
// meter's word, a window's word, an entry (a window under two limits, the
// sliding log), admitted and denied, on one hot key and across many.
func TestDecisionsAllocateNothing(t *testing.T) {
	cases := []struct {
		alg    core.Algorithm
		limits []core.Limit
	}{
		{core.GCRA, []core.Limit{core.PerSecond(100)}},
		{core.TokenBucket, []core.Limit{core.PerSecond(100)}},
		{core.LeakyBucket, []core.Limit{core.PerSecond(100)}},
		{core.FixedWindow, []core.Limit{core.PerSecond(100)}},
		{core.SlidingWindow, []core.Limit{core.PerSecond(100)}},
		{core.SlidingWindow, []core.Limit{core.PerSecond(1 << 19)}},
		{core.FixedWindow, []core.Limit{core.PerSecond(100), core.PerMinute(1000)}},
		{core.SlidingLog, []core.Limit{core.PerSecond(100)}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%v", c.alg, c.limits), func(t *testing.T) {
			st := newStore(t, memory.WithSweepInterval(0))
			clock := core.NewManualClock(storetest.Start)
			opts := []core.Option{core.WithClock(clock)}
			for _, l := range c.limits[1:] {
				opts = append(opts, core.WithLimit(l))
			}
			lim, err := core.NewLimiter(st, c.alg, c.limits[0], opts...)
			must.NoError(t, err)
			ctx := context.Background()
			keys := make([]string, 64)
			for i := range keys {
				keys[i] = fmt.Sprint("client-", i)
				_, err := lim.Allow(ctx, keys[i])
				must.NoError(t, err)
			}
			cost := max(1, c.limits[0].Rate/50) // spent in a fiftieth of a period: some admitted, some denied
			var i, allowed int
			allocs := testing.AllocsPerRun(2000, func() {
				clock.Advance(time.Millisecond)
				for _, key := range []string{keys[0], keys[i%len(keys)]} {
					if d, err := lim.AllowN(ctx, key, cost); err == nil && d.Allowed {
						allowed++
					}
				}
				i++
			})
			expect.Zero(t, allocs)
			expect.Positive(t, allowed, "admissions were measured")
			expect.Less(t, allowed, 2*2001, "denials were measured")
		})
	}
}
