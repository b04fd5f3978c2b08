package core_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// TestTokenLeaseMeterBound: 4 instances x 4 goroutines asking a GCRA or
// token bucket key far past its rate admit at most burst + R x (T + tau)
// in any interval T.
func TestTokenLeaseMeterBound(t *testing.T) {
	const tau = 50 * time.Millisecond
	limit := core.PerSecond(1000)
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(leaseStart)
			ls := make([]*core.Limiter, 4)
			for i := range ls {
				ls[i] = newLeased(t, st, clock, alg, limit, core.TokenLease{Max: 50, TTL: tau})
			}
			var mu sync.Mutex
			var at []int64
			for range 1500 { // 1.5 s in 1 ms steps, 16 requests a step: 16x the rate
				var wg sync.WaitGroup
				for _, l := range ls {
					for range 4 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							now := core.Micros(clock.Now())
							d, err := l.Allow(context.Background(), "hot")
							if err == nil && d.Allowed {
								mu.Lock()
								at = append(at, now)
								mu.Unlock()
							}
						}()
					}
				}
				wg.Wait()
				clock.Advance(time.Millisecond)
			}
			slices.Sort(at)
			for _, T := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
				bound := limit.Burst + int64(float64(limit.Rate)*(T+tau).Seconds())
				most := 0
				for i := range at {
					j, _ := slices.BinarySearch(at, at[i]+T.Microseconds())
					most = max(most, j-i)
				}
				expect.True(t, int64(most) <= bound, fmt.Sprintf("%d admitted within %s, bound %d", most, T, bound))
			}
			expect.True(t, len(at) >= 1000+1400, fmt.Sprint(len(at), " admitted in 1.5 s at 1000/s with a burst of 1000"))
		})
	}
}

// TestTokenLeaseTamperedGrant: a grant beyond the lease's terms is refused
// and nothing of it admitted.
func TestTokenLeaseTamperedGrant(t *testing.T) {
	tests := []struct {
		name   string
		cost   int64
		tamper func(g *core.TokenGrant, want int64)
	}{
		{"more than asked", 1, func(g *core.TokenGrant, want int64) { g.Granted = want + 1 }},
		{"fewer than the cost", 3, func(g *core.TokenGrant, _ int64) { g.Granted = 2 }},
		{"negative", 1, func(g *core.TokenGrant, _ int64) { g.Granted = -5 }},
		{"a life beyond the TTL", 1, func(g *core.TokenGrant, _ int64) { g.TTL = time.Hour }},
		{"no life", 1, func(g *core.TokenGrant, _ int64) { g.TTL = 0 }},
		{"an admission of nothing", 1, func(g *core.TokenGrant, _ int64) { g.Granted, g.Decision.Allowed = 0, true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(leaseStart)
			l := newLeased(t, st, clock, core.FixedWindow, core.PerMinute(1000), core.TokenLease{Max: 10, TTL: time.Second})
			ctx := context.Background()
			for range 3 { // hot: the third decision leases
				_, err := l.AllowN(ctx, "k", tt.cost)
				must.NoError(t, err)
			}
			must.NoError(t, l.ReturnLeasedTokens(ctx)) // no good lease held
			st.tamper = tt.tamper
			local := l.TokenLeaseStats().Local
			var refused int
			for range 5 {
				d, err := l.AllowN(ctx, "k", tt.cost)
				if err != nil {
					must.ErrorIs(t, err, core.ErrTokenGrant)
					expect.False(t, d.Allowed)
					refused++
				}
			}
			expect.True(t, refused > 0, "a tampered grant is refused")
			core.WaitTokenLeases(l)
			expect.Equal(t, local, l.TokenLeaseStats().Local, "nothing of it spent")
		})
	}
}

// TestTokenLeaseStoreDown: with the store down a held lease is spent until
// it runs out, then the store's error applies; leasing resumes once it is
// back.
func TestTokenLeaseStoreDown(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.GCRA, core.PerSecond(1000), core.TokenLease{Max: 20, TTL: 100 * time.Millisecond})
	ctx := context.Background()
	for range 40 {
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
	}
	core.WaitTokenLeases(l)
	held := l.TokenLeaseStats()
	must.True(t, held.Leased > 0, "the key leased")
	st.down.Store(true)
	local := 0
	for {
		d, err := l.Allow(ctx, "hot")
		if err != nil {
			must.ErrorIs(t, err, errLeaseDown)
			break
		}
		must.True(t, d.Allowed)
		local++
		must.True(t, local <= 40, "at most the held leases")
	}
	expect.True(t, local > 0, "held tokens are spent while the store is down")
	clock.Advance(100 * time.Millisecond)
	core.WaitTokenLeases(l)
	st.down.Store(false)
	before := l.TokenLeaseStats().Leased
	for range 10 {
		d, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		expect.True(t, d.Allowed)
	}
	expect.True(t, l.TokenLeaseStats().Leased > before, "leasing resumes")
}

// TestTokenLeaseReturn: ReturnLeasedTokens gives every unspent token back,
// so the store counts exactly what was admitted.
func TestTokenLeaseReturn(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.GCRA} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(leaseStart)
			l := newLeased(t, st, clock, alg, core.PerMinute(1000), core.TokenLease{Max: 50, TTL: time.Second})
			ctx := context.Background()
			for range 37 {
				d, err := l.Allow(ctx, "hot")
				must.NoError(t, err)
				must.True(t, d.Allowed)
			}
			core.WaitTokenLeases(l)
			must.True(t, l.TokenLeaseStats().Leased > 37, "tokens held beyond what was admitted")
			must.NoError(t, l.ReturnLeasedTokens(ctx))
			s := l.TokenLeaseStats()
			expect.Equal(t, s.Leased-s.Local-(s.Decisions-s.Local-st.takes.Load()), s.Returned, "every unspent token returned")
			d, err := l.Peek(ctx, "hot")
			must.NoError(t, err)
			expect.Equal(t, int64(1000-37), d.Remaining, "the store counts what was admitted")
		})
	}
}

// TestTokenLeaseSpendAllocs: a decision from a held lease allocates nothing.
func TestTokenLeaseSpendAllocs(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.GCRA, core.PerSecond(100_000), core.TokenLease{Max: 1000, TTL: time.Second, Fleet: 1})
	ctx := context.Background()
	for l.TokenLeaseStats().Leased < 1000 {
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		core.WaitTokenLeases(l)
	}
	for range 100 { // spend from a fresh lease of 1000, far from a refresh
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
	}
	core.WaitTokenLeases(l)
	local := l.TokenLeaseStats().Local
	allocs := testing.AllocsPerRun(100, func() {
		d, err := l.Allow(ctx, "hot")
		if err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
	})
	expect.Equal(t, 0.0, allocs)
	expect.Equal(t, local+101, l.TokenLeaseStats().Local, "every decision was local")
}

// TestTokenLeaseHoldsAtMostMax: however many goroutines lease a key at
// once, one instance holds at most Max of its tokens; the rest go back.
func TestTokenLeaseHoldsAtMostMax(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.FixedWindow, core.PerHour(100_000), core.TokenLease{Max: 20, TTL: time.Second})
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if _, err := l.Allow(context.Background(), "hot"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	core.WaitTokenLeases(l)
	before := l.TokenLeaseStats()
	must.NoError(t, l.ReturnLeasedTokens(context.Background()))
	after := l.TokenLeaseStats()
	expect.True(t, after.Returned-before.Returned <= 20, fmt.Sprint(after.Returned-before.Returned, " tokens held at once"))
	d, err := l.Peek(context.Background(), "hot")
	must.NoError(t, err)
	expect.Equal(t, int64(100_000-32*200), d.Remaining, "the store counts exactly what was admitted")
}
