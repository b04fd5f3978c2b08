package storetest

import (
	"cmp"
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

// Disrupt does something to a store's servers while limiters lease one of
// its keys (a Redis Cluster failover of the key's slot, SCRIPT FLUSH on
// every node), and returns once it is done; it may fail t. req names the
// key the limiters share (its Namespace, Key, Algorithm and Limits), for a
// store to find where it keeps it (luascript.Store.Keys).
type Disrupt func(t *testing.T, req core.TakeRequest)

// The fleet of RunTokenLeaseDisrupted: instances, each with its own store,
// and goroutines per instance.
const (
	disruptedInstances  = 10
	disruptedGoroutines = 8
)

// RunTokenLeaseDisrupted checks that token leases keep their bound, and that
// no decision fails, while disrupt runs: 10 limiters, each on its own store
// from newStore (ten instances, each with its own client, sharing the
// servers) x 8 goroutines lease one key on a manual clock, and disrupt is
// called once the run is under way; the run goes on while it works and a
// little after it returns. newStore must decide on the caller's clock.
//
//   - fixed window, 1000 per hour, leases of up to 50 (Fleet 10), the clock
//     an hour further for each window: in every window, what the limiters
//     admitted plus what the store has left once they gave back what they
//     held (ReturnLeasedTokens) is exactly 1000, and nothing is left but
//     what they held;
//   - GCRA at 1000/s, leases of up to 50 for 50 ms, the clock 1 ms further
//     for each round of 80 requests: at most Burst + Rate x (T + TTL)
//     admitted in any T.
func RunTokenLeaseDisrupted(t *testing.T, newStore NewStore, disrupt Disrupt) {
	t.Run("FixedWindow", func(t *testing.T) { runDisruptedWindow(t, newStore, disrupt) })
	t.Run("GCRA", func(t *testing.T) { runDisruptedMeter(t, newStore, disrupt) })
}

// disruptedFleet returns disruptedInstances limiters of alg and limit, each
// on its own store, leasing as tl says, on one manual clock at start, with
// opts, and the request of key that names what they share.
func disruptedFleet(t *testing.T, newStore NewStore, alg core.Algorithm, limit core.Limit, tl core.TokenLease, start time.Time, opts ...core.Option) ([]*core.Limiter, *core.ManualClock, core.TakeRequest) {
	t.Helper()
	clk := core.NewManualClock(start)
	opts = append([]core.Option{core.WithClock(clk), core.WithNamespace(t.Name()), core.WithTokenLease(tl)}, opts...)
	ls := make([]*core.Limiter, disruptedInstances)
	for i := range ls {
		var err error
		ls[i], err = core.NewLimiter(newStore(t), alg, limit, opts...)
		must.NoError(t, err)
		t.Cleanup(func() { _ = ls[i].ReturnLeasedTokens(context.Background()) })
	}
	req := core.TakeRequest{Namespace: t.Name(), Key: "hot", Algorithm: alg, Limits: []core.Limit{limit}, Cost: 1, Now: start}
	return ls, clk, req
}

// disruptedLoad is a run's load, driven in its own goroutine while the test's
// goroutine disrupts: what it saw, read once done is closed.
type disruptedLoad struct {
	started chan struct{} // closed once the run is under way
	stop    chan struct{} // closed once the disruption is over
	done    chan struct{} // closed when the load has ended

	failed   int   // decisions that returned an error
	firstErr error // the first of them
	steps    int   // windows or rounds run
}

// disruptLoad runs load in a goroutine, calls disrupt on t's goroutine once
// load closes started, and returns when load has ended (after stop, closed
// when disrupt returns or fails t).
func disruptLoad(t *testing.T, req core.TakeRequest, disrupt Disrupt, load func(r *disruptedLoad)) *disruptedLoad {
	t.Helper()
	r := &disruptedLoad{started: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		load(r)
	}()
	defer func() {
		close(r.stop)
		<-r.done
	}()
	select {
	case <-r.started:
	case <-r.done:
		return r
	}
	began := time.Now()
	disrupt(t, req)
	t.Logf("the disruption took %s", time.Since(began))
	return r
}

// note records failures of the load.
func (r *disruptedLoad) note(failed int, err error) {
	r.failed += failed
	r.firstErr = cmp.Or(r.firstErr, err)
}

// stopped reports whether the disruption is over.
func (r *disruptedLoad) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// askRound has each of ls's limiters' g goroutines ask key once, and returns
// the instants (µs) of the admissions, the number of decisions that failed
// and the first failure.
func askRound(ls []*core.Limiter, clk *core.ManualClock, key string, g int) (at []int64, failed int, first error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, l := range ls {
		for range g {
			wg.Go(func() {
				now := core.Micros(clk.Now())
				d, err := l.Allow(context.Background(), key)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					failed++
					first = cmp.Or(first, err)
				case d.Allowed:
					at = append(at, now)
				}
			})
		}
	}
	wg.Wait()
	return at, failed, first
}

// windowResult is what one window of a fixed window's run admitted, and
// what its store had left once the limiters gave their leases back.
type windowResult struct {
	admitted, left int64
	failed         int   // decisions, give-backs and the peek that failed
	err            error // the first of them
}

// runDisruptedWindow: a fixed window of 1000 per hour; each window runs
// rounds of 80 requests until one admits nothing, then every limiter gives
// back what it holds and a peek reads what the store has left. Windows run
// one after another: the first before disrupt, the last two begun after it
// returned.
func runDisruptedWindow(t *testing.T, newStore NewStore, disrupt Disrupt) {
	ls, clk, req := disruptedFleet(t, newStore, core.FixedWindow, core.PerHour(windowRate), windowLease, windowStart)
	var windows []windowResult
	r := disruptLoad(t, req, disrupt, func(r *disruptedLoad) {
		for after := 0; after < 2 && r.steps < 10_000; r.steps++ {
			if r.stopped() { // a window begun after the disruption
				after++
			}
			clk.Set(windowStart.Add(time.Duration(r.steps) * time.Hour))
			w := disruptedWindow(ls, clk)
			r.note(w.failed, w.err)
			windows = append(windows, w)
			if r.steps == 0 {
				close(r.started)
			}
		}
	})
	must.Zero(t, r.failed, "decisions failed; the first:", r.firstErr)
	must.True(t, len(windows) >= 3, "a window before the disruption and two after it:", len(windows))
	var admitted, left int64
	for i, w := range windows {
		expectWindowExact(t, i, w)
		admitted, left = admitted+w.admitted, left+w.left
	}
	t.Logf("%d windows of %d: %d admitted, %d left in the store after the leases came back", len(windows), windowRate, admitted, left)
}

// The fixed window of runDisruptedWindow and RunTokenLeaseOutage: 1000 per
// hour, leases of up to 50 for a minute (Fleet 10), the first window's
// instant.
const windowRate = 1000

var (
	windowLease = core.TokenLease{Max: 50, TTL: time.Minute, Fleet: disruptedInstances}
	windowStart = Start.Truncate(time.Hour).Add(time.Minute)
)

// expectWindowExact checks that window i admitted, with what its store had
// left, exactly windowRate, and that nothing was left but what the leases
// held.
func expectWindowExact(t *testing.T, i int, w windowResult) {
	t.Helper()
	expect.Equal(t, int64(windowRate), w.admitted+w.left, "window", i, "admitted", w.admitted, "left", w.left)
	expect.LessOrEqual(t, w.left, disruptedInstances*windowLease.Max, "window", i, "left more than the leases held")
}

// disruptedWindow runs one window at clk's instant: rounds of requests until
// one admits nothing, then the limiters' leases given back (within 5 s) and a
// peek (left is -1 when it failed).
func disruptedWindow(ls []*core.Limiter, clk *core.ManualClock) windowResult {
	var w windowResult
	for {
		at, failed, err := askRound(ls, clk, "hot", disruptedGoroutines)
		w.note(failed, err)
		w.admitted += int64(len(at))
		clk.Advance(time.Millisecond)
		if len(at) == 0 {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, l := range ls {
		if err := l.ReturnLeasedTokens(ctx); err != nil {
			w.note(1, fmt.Errorf("giving the leases back: %w", err))
		}
	}
	d, err := ls[0].Peek(ctx, "hot")
	if err != nil {
		w.note(1, fmt.Errorf("peek: %w", err))
		d.Remaining = -1
	}
	w.left = d.Remaining
	return w
}

// note records failures of w.
func (w *windowResult) note(failed int, err error) {
	w.failed += failed
	w.err = cmp.Or(w.err, err)
}

// runDisruptedMeter: GCRA at 1000/s, rounds of 80 requests 1 ms apart, 50
// rounds before disrupt and 100 after it: at most Burst + Rate x (T + TTL)
// admitted in any T.
func runDisruptedMeter(t *testing.T, newStore NewStore, disrupt Disrupt) {
	const tau = 50 * time.Millisecond
	limit := core.PerSecond(1000)
	ls, clk, req := disruptedFleet(t, newStore, core.GCRA, limit, core.TokenLease{Max: 50, TTL: tau}, Start)
	var at []int64
	r := disruptLoad(t, req, disrupt, func(r *disruptedLoad) {
		for after := 0; after < 100 && r.steps < 100_000; r.steps++ {
			if r.stopped() { // a round begun after the disruption
				after++
			}
			got, failed, err := askRound(ls, clk, "hot", disruptedGoroutines)
			r.note(failed, err)
			at = append(at, got...)
			clk.Advance(time.Millisecond)
			if r.steps == 50 {
				close(r.started)
			}
		}
	})
	must.Zero(t, r.failed, "decisions failed; the first:", r.firstErr)
	slices.Sort(at)
	for _, T := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		bound := limit.Burst + int64(float64(limit.Rate)*(T+tau).Seconds())
		most := 0
		for i := range at {
			j, _ := slices.BinarySearch(at, at[i]+T.Microseconds())
			most = max(most, j-i)
		}
		expect.LessOrEqual(t, int64(most), bound, "admitted within", T)
	}
	// A lease call that outlives its TTL loses its tokens (false denials,
	// within the bound), so only the burst's half is demanded: the run was
	// not all denials.
	elapsed := time.Duration(r.steps) * time.Millisecond
	expect.GreaterOrEqual(t, int64(len(at)), limit.Burst/2, "admitted in", elapsed, "at 1000/s with a burst of 1000")
	t.Logf("%d rounds (%s of the clock): %d admitted", r.steps, elapsed, len(at))
}
