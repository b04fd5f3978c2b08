package core_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// Token leases on a store whose refreshes come back late (lease_wait_test.go
// has the store, heldLeaser): refreshes that start early enough, and the
// bound when the key is far past its limit.

// slowFleet drives limiters sharing a leasingStore, each through a
// heldLeaser that holds every background lease call for lat of the manual
// clock, in ticks of 1 ms, and decides it when it is released, on that
// clock: the refreshes of a Redis that answers late, with no sleep.
type slowFleet struct {
	t       *testing.T
	clock   *core.ManualClock
	lat     time.Duration
	ls      []*core.Limiter
	sts     []*heldLeaser
	pending []slowCall
	// asked counts the requests that called the store while a lease call
	// of their instance was on its way.
	asked int
}

// slowCall is an instance's held refresh and the channel closed when it has
// landed.
type slowCall struct {
	i      int
	call   *heldCall
	landed <-chan struct{}
}

func newSlowFleet(t *testing.T, n int, lat time.Duration, limit core.Limit, tl core.TokenLease) *slowFleet {
	f := &slowFleet{t: t, clock: core.NewManualClock(leaseStart), lat: lat}
	st := newLeasingStore()
	for range n {
		h := newHeldLeaser(st, func() bool { return true })
		h.server = f.clock
		f.sts = append(f.sts, h)
		f.ls = append(f.ls, newLeased(t, h, f.clock, core.GCRA, limit, tl))
	}
	t.Cleanup(f.releaseAll) // before the limiters give their tokens back
	return f
}

// ask decides a request of key on the fleet's i-th limiter; a refresh it
// starts is held until lat has passed.
func (f *slowFleet) ask(i int, key string) core.Decision {
	l, st := f.ls[i], f.sts[i]
	refreshes, requests := l.TokenLeaseStats().Refreshes, st.requests.Load()
	onItsWay := slices.ContainsFunc(f.pending, func(c slowCall) bool { return c.i == i })
	d, err := l.Allow(asRequest, key)
	must.NoError(f.t, err)
	if onItsWay && st.requests.Load() != requests {
		f.asked++
	}
	if l.TokenLeaseStats().Refreshes != refreshes {
		call := <-st.arrived
		f.pending = append(f.pending, slowCall{i, call, core.LeaseLanded(l, key)})
	}
	return d
}

// tick lands the held refreshes whose time has come, then moves the clock
// on by a millisecond.
func (f *slowFleet) tick() {
	now := f.clock.Now()
	f.pending = slices.DeleteFunc(f.pending, func(c slowCall) bool {
		if now.Before(c.call.now.Add(f.lat)) {
			return false
		}
		c.call.free()
		<-c.landed
		return true
	})
	f.clock.Advance(time.Millisecond)
}

func (f *slowFleet) releaseAll() {
	for _, c := range f.pending {
		c.call.free()
	}
	f.pending = nil
}

// TestTokenLeaseRefreshEarlyForLatency: a key spending a lease of about 20
// tokens at 1 a ms, whose refreshes take 15 ms, runs dry in the first
// refresh (started at half the lease, before any latency was seen); once
// the lease calls' latency is known, refreshes start early enough that
// every decision is taken from a lease.
func TestTokenLeaseRefreshEarlyForLatency(t *testing.T) {
	f := newSlowFleet(t, 1, 15*time.Millisecond, core.PerSecond(1000), core.TokenLease{Max: 50, TTL: 40 * time.Millisecond})
	l := f.ls[0]
	var byStore []int // the ticks whose decision took a store call
	for i := range 300 {
		before := l.TokenLeaseStats().Local
		d := f.ask(0, "k")
		must.True(t, d.Allowed, "a key under its limit is never denied")
		if l.TokenLeaseStats().Local == before {
			byStore = append(byStore, i)
		}
		f.tick()
	}
	t.Logf("decided by the store at ticks %v; %+v", byStore, l.TokenLeaseStats())
	must.True(t, len(byStore) > 0)
	expect.True(t, slices.ContainsFunc(byStore, func(i int) bool { return i > 10 && i < 100 }), "the lease ran dry in the first refresh")
	expect.False(t, slices.ContainsFunc(byStore, func(i int) bool { return i >= 100 }), "never once the latency is known")
}

// TestTokenLeaseSlowRefreshBound: 4 instances x 8 requests a ms on one
// GCRA key of 1000/s (burst 100), 32 times its rate, every refresh 10 ms
// late: at most Burst + Rate x (T + TTL) admitted in any T; at least the
// exact count less what 4 instances' leases and lease calls can hold
// (2 x 4 x Max); and nearly every decision is local (a request that finds
// its lease empty at the limit is denied at once, not held for the
// refresh, and not sent to the store).
func TestTokenLeaseSlowRefreshBound(t *testing.T) {
	const (
		tau       = 50 * time.Millisecond
		instances = 4
		maxLease  = 20
		ticks     = 300
	)
	limit := core.PerSecond(1000).WithBurst(100)
	f := newSlowFleet(t, instances, 10*time.Millisecond, limit, core.TokenLease{Max: maxLease, TTL: tau, Fleet: instances})
	var at []int64
	for range ticks {
		for i := range instances {
			for range 8 {
				if f.ask(i, "hot").Allowed {
					at = append(at, core.Micros(f.clock.Now()))
				}
			}
		}
		f.tick()
	}
	for _, T := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, ticks * time.Millisecond} {
		bound := limit.Burst + int64(float64(limit.Rate)*(T+tau).Seconds())
		most := 0
		for i := range at {
			j, _ := slices.BinarySearch(at, at[i]+T.Microseconds())
			most = max(most, j-i)
		}
		expect.True(t, int64(most) <= bound, fmt.Sprintf("%d admitted within %s, bound %d", most, T, bound))
	}
	exact := limit.Burst + limit.Rate*ticks/1000
	expect.True(t, int64(len(at)) >= exact-2*instances*maxLease, fmt.Sprint(len(at), " admitted, exactly ", exact))
	var local, decisions int64
	for _, l := range f.ls {
		s := l.TokenLeaseStats()
		local, decisions = local+s.Local, decisions+s.Decisions
	}
	t.Logf("%d admitted of %d exact; %d of %d decisions local; %d asked the store while a refresh was on its way", len(at), exact, local, decisions, f.asked)
	expect.True(t, local*100 >= decisions*90, fmt.Sprint(local, " of ", decisions, " decisions local"))
	expect.True(t, f.asked*50 <= int(decisions), fmt.Sprint(f.asked, " asked the store while a refresh was on its way"))
}
