package core_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// heldLeaser is one instance's way to a leasingStore, whose background
// lease calls (refreshes) can be held: each one is sent on arrived as it
// comes, and one it holds is decided, at its own instant, once the test
// closes its release channel. A request's own call (its context carries requestCall) is never
// held, so a test that asks in one goroutine never waits on itself; it is
// counted in requests.
type heldLeaser struct {
	*leasingStore
	requests atomic.Int64
	// hold reports whether to hold a background lease call that comes.
	hold    func() bool
	arrived chan *heldCall
	// server, when set, is the clock a held call is decided on when it is
	// released, as Redis decides on its own clock (TIME) when the call
	// reaches it; else it is decided at the instant the limiter asked at.
	server *core.ManualClock
	// short is set once the store granted fewer tokens than a call asked.
	mu    sync.Mutex
	short bool
}

// heldCall is a background lease call that came to the store.
type heldCall struct {
	now     time.Time // the instant the limiter asked at
	want    int64
	held    bool // else it was decided at once
	release chan struct{}
	once    sync.Once
}

// free lets a held call be decided (once; again is a no-op).
func (c *heldCall) free() { c.once.Do(func() { close(c.release) }) }

// requestCall marks the context of a test's requests (see heldLeaser).
type requestCall struct{}

var asRequest = context.WithValue(context.Background(), requestCall{}, true)

func newHeldLeaser(st *leasingStore, hold func() bool) *heldLeaser {
	return &heldLeaser{leasingStore: st, hold: hold, arrived: make(chan *heldCall, 64)}
}

func (h *heldLeaser) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if ctx.Value(requestCall{}) != nil {
		h.requests.Add(1)
	}
	return h.leasingStore.Take(ctx, req)
}

func (h *heldLeaser) LeaseTokens(ctx context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	if ctx.Value(requestCall{}) != nil {
		h.requests.Add(1)
	} else if c := (&heldCall{now: req.Now, want: want, held: h.hold(), release: make(chan struct{})}); c.held {
		h.arrived <- c
		<-c.release
		if h.server != nil {
			req.Now = h.server.Now()
		}
	} else {
		h.arrived <- c
	}
	g, err := h.leasingStore.LeaseTokens(ctx, req, want, ttl)
	if err == nil && g.Granted > 0 && g.Granted < want {
		h.mu.Lock()
		h.short = true
		h.mu.Unlock()
	}
	return g, err
}

// wasShort reports whether the store granted fewer tokens than asked.
func (h *heldLeaser) wasShort() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.short
}

// heldStep decides a request of key on l, then waits for the lease call it
// started in the background, if any, to land, or, when st holds it, returns
// it. The steps of a test are thus the same on every run.
func heldStep(t *testing.T, l *core.Limiter, st *heldLeaser, key string) (core.Decision, *heldCall) {
	t.Helper()
	refreshes := l.TokenLeaseStats().Refreshes
	d, err := l.Allow(asRequest, key)
	must.NoError(t, err)
	if l.TokenLeaseStats().Refreshes == refreshes {
		return d, nil
	}
	if call := <-st.arrived; call.held {
		t.Cleanup(call.free) // before the limiter's give-back waits for it, should the test fail
		return d, call
	}
	core.WaitTokenLeases(l)
	return d, nil
}

// storeCalls is the number of decisions and lease calls st answered.
func (m *leasingStore) storeCalls() int64 { return m.takes.Load() + m.leases.Load() }

// TestTokenLeaseRefusesAtLimit: once a key's lease call came back short
// (the store had fewer tokens than asked), a request that finds the lease
// empty while the next lease call is on its way is denied at once, with no
// store call, RetryAfter one emission interval; once the store may have
// regained more than that call asks for, the next request asks the store
// again (and is admitted).
func TestTokenLeaseRefusesAtLimit(t *testing.T) {
	var st *heldLeaser
	st = newHeldLeaser(newLeasingStore(), func() bool { return st.wasShort() })
	clock := core.NewManualClock(leaseStart)
	limit := core.PerSecond(100) // one token per 10 ms, a burst of 100
	l := newLeased(t, st, clock, core.GCRA, limit, core.TokenLease{Max: 20, TTL: 100 * time.Millisecond})
	other, err := core.NewLimiter(st, core.GCRA, limit, core.WithClock(clock))
	must.NoError(t, err)
	d, err := other.AllowN(context.Background(), "k", 60) // another instance: 40 tokens left
	must.NoError(t, err)
	must.True(t, d.Allowed)

	admitted := 0
	var call *heldCall // the refresh after the short grant, held
	var calls, local int64
	for {
		calls, local = st.storeCalls(), l.TokenLeaseStats().Local
		var held *heldCall
		if d, held = heldStep(t, l, st, "k"); held != nil {
			call = held
		}
		if !d.Allowed {
			break
		}
		admitted++
		must.True(t, admitted <= 40, "at most the store's 40 tokens")
	}
	expect.Equal(t, 40, admitted, "every token the store had, through leases")
	must.True(t, st.wasShort(), "a lease call came back short")
	must.NotNil(t, call, "a refresh after it")
	must.NotNil(t, core.LeaseLanded(l, "k"), "a lease call on its way")
	expect.Equal(t, calls, st.storeCalls(), "the first denial made no store call, nor waited for the call on its way")
	expect.Equal(t, local+1, l.TokenLeaseStats().Local)
	expect.Equal(t, 10*time.Millisecond, d.RetryAfter, "one emission interval")
	expect.Equal(t, limit.Rate, d.Limit.Rate)
	calls, local = st.storeCalls(), l.TokenLeaseStats().Local
	for range 5 {
		d, err = l.Allow(asRequest, "k")
		must.NoError(t, err)
		expect.False(t, d.Allowed)
	}
	expect.Equal(t, calls, st.storeCalls(), "denied with no store call, no wait for the call")
	expect.Equal(t, local+5, l.TokenLeaseStats().Local, "counted as local decisions")

	// The store regains one token per 10 ms: past what the call on its way
	// asks for, the denial could be false, so the store decides again.
	clock.Advance(time.Duration(call.want) * 10 * time.Millisecond)
	d, err = l.Allow(asRequest, "k")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "asked the store, which had tokens")
	expect.Equal(t, calls+1, st.storeCalls())
	call.free()
	core.WaitTokenLeases(l)
}

// TestTokenLeaseRefusesAtWindowLimit: a fixed window's lease call that
// came back short (another instance spent the window's quota meanwhile)
// while a refresh is on its way: the next request that finds the lease
// empty is denied at once, RetryAfter the window's end; a store's denial
// would say the same.
func TestTokenLeaseRefusesAtWindowLimit(t *testing.T) {
	var st *heldLeaser
	st = newHeldLeaser(newLeasingStore(), func() bool { return st.leases.Load() >= 4 }) // leases of 2, 4, 8, 16, then held
	clock := core.NewManualClock(leaseStart.Add(time.Second))
	limit := core.PerMinute(1000)
	l := newLeased(t, st, clock, core.FixedWindow, limit, core.TokenLease{Max: 20, TTL: 10 * time.Second})
	var call *heldCall
	for call == nil {
		var d core.Decision
		d, call = heldStep(t, l, st, "k")
		must.True(t, d.Allowed)
	}
	must.True(t, call.want < 20, "room beside the held refresh for a request's own lease call")
	other, err := core.NewLimiter(st, core.FixedWindow, limit, core.WithClock(clock))
	must.NoError(t, err)
	peek, err := other.Peek(context.Background(), "k")
	must.NoError(t, err)
	d, err := other.AllowN(context.Background(), "k", peek.Remaining-1) // another instance: 1 token left
	must.NoError(t, err)
	must.True(t, d.Allowed)
	for !st.wasShort() { // spend the lease; the request that finds it empty leases the last token
		d, err = l.Allow(asRequest, "k")
		must.NoError(t, err)
		must.True(t, d.Allowed)
	}
	calls, local := st.storeCalls(), l.TokenLeaseStats().Local
	d, err = l.Allow(asRequest, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	expect.Equal(t, 59*time.Second, d.RetryAfter, "the window's end")
	expect.Equal(t, calls, st.storeCalls(), "denied with no store call")
	expect.Equal(t, local+1, l.TokenLeaseStats().Local)
	call.free()
	core.WaitTokenLeases(l)
	peek, err = l.Peek(context.Background(), "k")
	must.NoError(t, err)
	expect.Equal(t, int64(0), peek.Remaining, "the window's quota was spent")
}

// TestTokenLeaseWaitsAfterFullGrant: a key whose last lease call was
// granted all it asked for is not at its limit: a request that finds its
// lease empty while a refresh is on its way is never denied for it; it
// waits a moment, then asks the store itself.
func TestTokenLeaseWaitsAfterFullGrant(t *testing.T) {
	var st *heldLeaser
	st = newHeldLeaser(newLeasingStore(), func() bool { return st.leases.Load() >= 4 }) // leases of 2, 4, 8, 16, then held
	clock := core.NewManualClock(leaseStart)
	l := newLeased(t, st, clock, core.GCRA, core.PerSecond(1000), core.TokenLease{Max: 20, TTL: 100 * time.Millisecond})
	var call *heldCall
	for call == nil {
		var d core.Decision
		d, call = heldStep(t, l, st, "k")
		must.True(t, d.Allowed)
	}
	must.False(t, st.wasShort())
	// Spend what is held; then one request finds the lease empty.
	stats := l.TokenLeaseStats()
	for range 100 {
		before := l.TokenLeaseStats()
		d, err := l.Allow(asRequest, "k")
		must.NoError(t, err)
		must.True(t, d.Allowed, "never denied while the store has tokens")
		if l.TokenLeaseStats().Local == before.Local {
			break // decided by the store
		}
	}
	after := l.TokenLeaseStats()
	expect.Equal(t, stats.Decisions-stats.Local+1, after.Decisions-after.Local, "one request asked the store itself")
	must.NotNil(t, core.LeaseLanded(l, "k"), "while the refresh was still on its way")
	call.free()
	core.WaitTokenLeases(l)
}

// TestTokenLeaseWaitAllocs: a request's wait for a lease call on its way
// allocates nothing (its timer is used again), whether the call lands, the
// wait ends at its bound, or the request's context ends.
func TestTokenLeaseWaitAllocs(t *testing.T) {
	l := newLeased(t, newLeasingStore(), core.NewManualClock(leaseStart), core.GCRA, core.PerSecond(100), core.TokenLease{Max: 10, TTL: time.Second})
	ctx := context.Background()
	landed, onItsWay := make(chan struct{}), make(chan struct{})
	close(landed)
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name   string
		ctx    context.Context
		landed chan struct{}
		want   bool
	}{
		{"landed", ctx, landed, true},
		{"bound", ctx, onItsWay, false},
		{"context", done, onItsWay, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expect.Equal(t, tt.want, core.AwaitLeaseCall(tt.ctx, l, tt.landed))
			allocs := testing.AllocsPerRun(20, func() {
				if core.AwaitLeaseCall(tt.ctx, l, tt.landed) != tt.want {
					t.Fatal("wrong wait")
				}
			})
			expect.Equal(t, 0.0, allocs)
		})
	}
}
