package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// leasingStore is a TokenLeaser deciding with core's own helpers on states
// kept in a map, on the caller's clock: the reference a Redis store is
// checked against. It counts its calls, and can fail or tamper with grants.
type leasingStore struct {
	mu     sync.Mutex
	states map[string][]core.State
	takes, leases,
	refunds atomic.Int64
	down   atomic.Bool
	gate   atomic.Pointer[chan struct{}]        // when set, LeaseTokens waits for it to close
	tamper func(g *core.TokenGrant, want int64) // changes a grant before it is replied
}

func newLeasingStore() *leasingStore { return &leasingStore{states: map[string][]core.State{}} }

var errLeaseDown = errors.New("leasing store: down")

func (m *leasingStore) statesOf(req *core.TakeRequest) []core.State {
	k := req.Namespace + "\x00" + req.Key
	st, ok := m.states[k]
	if !ok {
		st = make([]core.State, len(req.Limits))
		m.states[k] = st
	}
	return st
}

func (m *leasingStore) Reset(_ context.Context, req core.TakeRequest) error {
	m.mu.Lock()
	delete(m.states, req.Namespace+"\x00"+req.Key)
	m.mu.Unlock()
	return nil
}

func (m *leasingStore) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	if m.down.Load() {
		return core.Decision{}, errLeaseDown
	}
	if req.Cost < 0 {
		m.refunds.Add(1)
	} else {
		m.takes.Add(1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var d core.Decision
	err := req.Decide(&d, m.statesOf(&req), core.Micros(req.Now))
	return d, err
}

func (m *leasingStore) LeaseTokens(_ context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	if m.down.Load() {
		return core.TokenGrant{}, errLeaseDown
	}
	m.leases.Add(1)
	if g := m.gate.Load(); g != nil {
		<-*g
	}
	m.mu.Lock()
	g, err := req.DecideGrant(m.statesOf(&req), want, ttl, core.Micros(req.Now))
	m.mu.Unlock()
	if m.tamper != nil {
		m.tamper(&g, want)
	}
	return g, err
}

var leaseStart = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// newLeased returns a limiter leasing from st on clock.
func newLeased(t *testing.T, st core.Store, clock core.Clock, alg core.Algorithm, limit core.Limit, tl core.TokenLease) *core.Limiter {
	t.Helper()
	l, err := core.NewLimiter(st, alg, limit, core.WithClock(clock), core.WithTokenLease(tl), core.WithoutBreaker())
	must.NoError(t, err)
	t.Cleanup(func() { expect.NoError(t, l.ReturnLeasedTokens(context.Background())) })
	return l
}

func TestTokenLeaseRejects(t *testing.T) {
	st := newLeasingStore()
	ok := core.TokenLease{Max: 10, TTL: time.Second}
	tests := []struct {
		name  string
		store core.Store
		alg   core.Algorithm
		limit core.Limit
		opts  []core.Option
		msg   string
	}{
		{"zero max", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{TTL: time.Second})}, "0 tokens, want at least 1"},
		{"negative max", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: -3, TTL: time.Second})}, "-3 tokens"},
		{"max above the rate", st, core.FixedWindow, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 101, TTL: time.Second})}, "above the limit 100/m"},
		{"max above the burst", st, core.GCRA, core.PerMinute(100).WithBurst(5), []core.Option{core.WithTokenLease(ok)}, "above the limit"},
		{"max above an added limit", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithLimit(core.PerSecond(5)), core.WithTokenLease(ok)}, "above the limit 5/s"},
		{"zero ttl", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 5})}, "TTL 0s, want more than 0"},
		{"negative ttl", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 5, TTL: -time.Second})}, "want more than 0"},
		{"ttl longer than the window", st, core.FixedWindow, core.PerSecond(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 5, TTL: 2 * time.Second})}, "longer than the window of 100/s"},
		{"sliding log", st, core.SlidingLog, core.PerMinute(100), []core.Option{core.WithTokenLease(ok)}, "sliding log cannot be leased exactly"},
		{"leaky bucket", st, core.LeakyBucket, core.PerMinute(100), []core.Option{core.WithTokenLease(ok)}, "leaky bucket cannot be leased exactly"},
		{"calendar", st, core.FixedWindow, core.Daily(1000), []core.Option{core.WithTokenLease(ok)}, "calendar limit"},
		{"penalty box", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(ok), core.WithBlockFor(time.Minute)}, "penalty box"},
		{"debt", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithDebt(5), core.WithTokenLease(ok)}, "debt bound"},
		{"negative fleet", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 5, TTL: time.Second, Fleet: -1})}, "fleet -1"},
		{"huge table", st, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(core.TokenLease{Max: 5, TTL: time.Second, Keys: core.MaxTokenLeaseKeys + 1})}, "keys 1048577"},
		{"store that leases nothing", &recordingStore{}, core.GCRA, core.PerMinute(100), []core.Option{core.WithTokenLease(ok)}, "leases no tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := core.NewLimiter(tt.store, tt.alg, tt.limit, tt.opts...)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, l)
		})
	}
	l, err := core.NewLimiter(st, core.SlidingWindow, core.PerSecond(100), core.WithTokenLease(ok))
	must.NoError(t, err)
	expect.Equal(t, ok, l.TokenLease())
	tier, err := l.Tier("small", core.PerSecond(5))
	must.ErrorIs(t, err, core.ErrInvalidOption, "a tier's limits are checked against the lease too")
	expect.Nil(t, tier)
}

// TestTokenLeaseColdKeys: keys asked for once each take exactly the
// one-call path (one Take each, no lease), in a bounded table, and leave no
// goroutine behind.
func TestTokenLeaseColdKeys(t *testing.T) {
	n := 100_000 // 100 times the table; BenchmarkRedisLeaseColdKeys runs 1,000,000 on Redis
	if testing.Short() {
		n = 50_000
	}
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.GCRA, core.PerSecond(100), core.TokenLease{Max: 50, TTL: 100 * time.Millisecond, Keys: 1024})
	ctx := context.Background()
	for i := range n {
		d, err := l.Allow(ctx, "cold-"+fmt.Sprint(i))
		must.NoError(t, err)
		must.True(t, d.Allowed)
		if i%1000 == 0 {
			clock.Advance(time.Microsecond)
		}
	}
	expect.Equal(t, int64(n), st.takes.Load(), "one Take per decision")
	expect.Equal(t, int64(0), st.leases.Load(), "no lease above 1")
	s := l.TokenLeaseStats()
	expect.Equal(t, int64(n), s.Decisions)
	expect.Equal(t, int64(n), s.Calls)
	expect.Equal(t, int64(0), s.Local+s.Leased+s.Refreshes)
}

// TestTokenLeaseWindowExact: 10 instances sharing one key of 100 per
// minute, leases of up to 20: exactly 100 admitted, then every instance
// denies, with far fewer store calls than decisions.
func TestTokenLeaseWindowExact(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(leaseStart)
			ls := make([]*core.Limiter, 10)
			for i := range ls {
				ls[i] = newLeased(t, st, clock, alg, core.PerMinute(100), core.TokenLease{Max: 20, TTL: time.Minute})
			}
			ctx := context.Background()
			admitted, decisions, callsAt100 := 0, 0, int64(0)
			for round := 0; round < 100; round++ {
				for _, l := range ls {
					for range 3 {
						d, err := l.Allow(ctx, "hot")
						must.NoError(t, err)
						decisions++
						if d.Allowed {
							admitted++
							if admitted == 100 {
								callsAt100 = st.takes.Load() + st.leases.Load()
							}
						}
					}
				}
				clock.Advance(10 * time.Millisecond) // 1 s in all, inside one window
				waitBackground(t, ls)
			}
			expect.Equal(t, 100, admitted, "exactly the limit in the window")
			for _, l := range ls {
				d, err := l.Allow(ctx, "hot")
				must.NoError(t, err)
				expect.False(t, d.Allowed, "denied everywhere once the quota is spent")
			}
			t.Logf("%d store calls for the 100 admissions, %d leases; %d decisions", callsAt100, st.leases.Load(), decisions)
			expect.True(t, st.leases.Load() > 0, "the hot key leased")
			expect.True(t, callsAt100 < 100, fmt.Sprint("store calls for 100 admissions: ", callsAt100))
		})
	}
}

// waitBackground waits for the limiters' background lease calls.
func waitBackground(t *testing.T, ls []*core.Limiter) {
	t.Helper()
	for _, l := range ls {
		core.WaitTokenLeases(l)
	}
}

// TestTokenLeaseSavesCalls: a hot key well below its limit costs the store
// a small fraction of a call per decision, on 4 instances.
func TestTokenLeaseSavesCalls(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.GCRA, core.TokenBucket} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(leaseStart)
			ls := make([]*core.Limiter, 4)
			for i := range ls {
				ls[i] = newLeased(t, st, clock, alg, core.PerMinute(100_000), core.TokenLease{Max: 100, TTL: time.Second, Fleet: 4})
			}
			ctx := context.Background()
			for range 500 {
				for _, l := range ls {
					for range 10 {
						d, err := l.Allow(ctx, "hot")
						must.NoError(t, err)
						must.True(t, d.Allowed)
					}
				}
				clock.Advance(time.Millisecond)
				waitBackground(t, ls)
			}
			var local, decisions, calls int64
			for _, l := range ls {
				s := l.TokenLeaseStats()
				local, decisions, calls = local+s.Local, decisions+s.Decisions, calls+s.Calls
			}
			expect.Equal(t, int64(20_000), decisions)
			expect.Equal(t, st.takes.Load()+st.leases.Load()+st.refunds.Load(), calls, "every store call counted")
			expect.True(t, calls*20 <= decisions, fmt.Sprint(calls, " store calls for ", decisions, " decisions"))
		})
	}
}

// TestTokenLeaseReset: a reset drops the key's leases, so the window after
// it admits exactly the limit again.
func TestTokenLeaseReset(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.FixedWindow, core.PerMinute(100), core.TokenLease{Max: 20, TTL: time.Minute})
	ctx := context.Background()
	for range 30 {
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
	}
	core.WaitTokenLeases(l)
	must.NoError(t, l.Reset(ctx, "hot"))
	admitted := 0
	for range 300 {
		d, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		if d.Allowed {
			admitted++
		}
		core.WaitTokenLeases(l)
	}
	expect.Equal(t, 100, admitted)
}

// TestTokenLeaseRepeatsDenials: once the store denies a key, its denials
// are repeated locally for at most the lease's TTL, then asked again.
func TestTokenLeaseRepeatsDenials(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.FixedWindow, core.PerMinute(10), core.TokenLease{Max: 5, TTL: time.Second})
	ctx := context.Background()
	for range 20 {
		_, err := l.Allow(ctx, "k")
		must.NoError(t, err)
	}
	calls := st.takes.Load() + st.leases.Load()
	for range 100 {
		d, err := l.Allow(ctx, "k")
		must.NoError(t, err)
		must.False(t, d.Allowed)
		expect.True(t, d.RetryAfter > 0 && d.RetryAfter <= time.Second, d.RetryAfter)
	}
	expect.Equal(t, calls, st.takes.Load()+st.leases.Load(), "denials repeated with no store call")
	clock.Advance(time.Second)
	d, err := l.Allow(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	expect.Equal(t, calls+1, st.takes.Load()+st.leases.Load(), "asked again after the TTL")
}

// TestTokenLeaseRefreshNeverBlocks: while a refresh hangs in the store, the
// requests that find tokens in the lease are decided at once.
func TestTokenLeaseRefreshNeverBlocks(t *testing.T) {
	st := newLeasingStore()
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.GCRA, core.PerSecond(10_000), core.TokenLease{Max: 64, TTL: time.Second})
	ctx := context.Background()
	for l.TokenLeaseStats().Leased < 64 { // grow the lease to 64
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		core.WaitTokenLeases(l)
	}
	must.NoError(t, l.ReturnLeasedTokens(ctx))
	for range 8 { // a fresh lease of 64, from one store call
		_, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		core.WaitTokenLeases(l)
	}
	gate := make(chan struct{})
	st.gate.Store(&gate)
	leases := st.leases.Load()
	local := l.TokenLeaseStats().Local
	admitted := 0
	for range 30 { // the refresh starts at half the lease and hangs
		d, err := l.Allow(ctx, "hot")
		must.NoError(t, err)
		must.True(t, d.Allowed)
		admitted++
	}
	expect.Equal(t, int64(30), l.TokenLeaseStats().Local-local, "every one decided from the lease")
	done, cancel := context.WithCancel(ctx)
	cancel()
	expect.ErrorIs(t, l.ReturnLeasedTokens(done), context.Canceled, "a shutdown's give-back ends with its context, not with the hanging refresh")
	close(gate)
	core.WaitTokenLeases(l)
	expect.True(t, st.leases.Load() > leases, "a refresh was asked for")
	expect.Equal(t, 30, admitted)
}

// TestTokenLeaseRefreshByAge: a meter's lease, spent at a steady pace too
// slow to run it down, is refreshed once it has lived 3/4 of its TTL; a
// window's lease cut short by its window's end is not (a refresh would end
// with it).
func TestTokenLeaseRefreshByAge(t *testing.T) {
	for _, tt := range []struct {
		alg     core.Algorithm
		start   time.Time
		step    time.Duration
		refresh bool
	}{
		{core.GCRA, leaseStart, 4 * time.Millisecond, true},                                     // 80 ms of a 100 ms lease
		{core.FixedWindow, leaseStart.Add(950 * time.Millisecond), 2 * time.Millisecond, false}, // 40 ms of a 50 ms lease
	} {
		t.Run(tt.alg.String(), func(t *testing.T) {
			st := newLeasingStore()
			clock := core.NewManualClock(tt.start)
			l := newLeased(t, st, clock, tt.alg, core.PerSecond(1000), core.TokenLease{Max: 64, TTL: 100 * time.Millisecond})
			ctx := context.Background()
			for l.TokenLeaseStats().Leased < 64 { // grow the lease to 64, at one instant
				_, err := l.Allow(ctx, "k")
				must.NoError(t, err)
				core.WaitTokenLeases(l)
			}
			must.NoError(t, l.ReturnLeasedTokens(ctx))
			_, err := l.Allow(ctx, "k") // a fresh lease of 64
			must.NoError(t, err)
			refreshes := l.TokenLeaseStats().Refreshes
			for range 20 { // 20 tokens: never down to half
				clock.Advance(tt.step)
				d, err := l.Allow(ctx, "k")
				must.NoError(t, err)
				must.True(t, d.Allowed)
				core.WaitTokenLeases(l)
			}
			expect.Equal(t, tt.refresh, l.TokenLeaseStats().Refreshes > refreshes)
		})
	}
}
