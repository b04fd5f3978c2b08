package core_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

var errDown = errors.New("test: store down")

// switchStore is a real memory store behind a switch: down, every call
// fails with fail (errDown unless set), and every call is counted. While
// holding, a call waits until hold is closed.
type switchStore struct {
	next    core.Store
	down    atomic.Bool
	fail    error
	calls   atomic.Int64
	holding atomic.Bool
	hold    chan struct{}
}

func newSwitchStore(t *testing.T, clk core.Clock) *switchStore {
	t.Helper()
	st, err := memory.New(memory.WithClock(clk))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &switchStore{next: st, fail: errDown, hold: make(chan struct{})}
}

func (s *switchStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	s.calls.Add(1)
	if s.holding.Load() {
		<-s.hold
	}
	if s.down.Load() {
		return core.Decision{}, s.fail
	}
	return s.next.Take(ctx, req)
}

// half is a jitter source that always says 0.5: with Jitter 0.2, every
// interval lasts 90% of its nominal length.
func half() float64 { return 0.5 }

func breakerLimiter(t *testing.T, st core.Store, clk core.Clock, opts ...core.Option) *core.Limiter {
	t.Helper()
	b := core.DefaultBreaker()
	b.Rand = half
	opts = append([]core.Option{core.WithClock(clk), core.WithBreaker(b)}, opts...)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100), opts...)
	must.NoError(t, err)
	return lim
}

// failN makes n calls that must fail with the store's own error.
func failN(t *testing.T, lim *core.Limiter, n int) {
	t.Helper()
	for i := range n {
		_, err := lim.Allow(context.Background(), "k")
		must.ErrorIs(t, err, errDown, "call %d", i)
	}
}

func TestBreakerOpensAndStopsAskingTheStore(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	st.down.Store(true)

	failN(t, lim, 4)
	expect.Equal(t, core.BreakerClosed, lim.BreakerState(), "four failures in a row leave it closed")
	failN(t, lim, 1)
	expect.Equal(t, core.BreakerOpen, lim.BreakerState())
	must.Equal(t, int64(5), st.calls.Load())

	// Open for 900 ms (1 s less 0.2 x 0.5 jitter): the store is not called.
	for i := range 100 {
		d, err := lim.Allow(context.Background(), "k")
		must.ErrorIs(t, err, core.ErrBreakerOpen)
		expect.Equal(t, 900*time.Millisecond-time.Duration(i)*time.Millisecond, d.RetryAfter)
		expect.False(t, d.Allowed)
		clk.Advance(time.Millisecond)
	}
	_, err := lim.Peek(context.Background(), "k")
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	_, err = lim.Refund(context.Background(), "k", 1, core.Decision{})
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	clk.Advance(799 * time.Millisecond)
	_, err = lim.Allow(context.Background(), "k")
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	expect.Equal(t, int64(5), st.calls.Load(), "the open interval asked the store nothing")

	// The interval ends: one probe fails, and the next interval is twice as long.
	clk.Advance(time.Millisecond)
	_, err = lim.Allow(context.Background(), "k")
	must.ErrorIs(t, err, errDown)
	expect.Equal(t, int64(6), st.calls.Load())
	d, err := lim.Allow(context.Background(), "k")
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	expect.Equal(t, 1800*time.Millisecond, d.RetryAfter)

	// The store recovers; the next probe closes the breaker, and every call
	// asks the store again, exactly.
	st.down.Store(false)
	clk.Advance(1800 * time.Millisecond)
	d, err = lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	expect.True(t, d.Allowed)
	expect.Equal(t, core.BreakerClosed, lim.BreakerState())
	for i := range 99 {
		d, err = lim.Allow(context.Background(), "k")
		must.NoError(t, err)
		expect.Equal(t, int64(98-i), d.Remaining)
	}
	d, err = lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "the 101st in the minute is denied: exact again")
	expect.Equal(t, int64(7+100), st.calls.Load())
}

func TestBreakerIntervalDoublesUpToMaxOpen(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	st.down.Store(true)
	failN(t, lim, 5)
	want := []time.Duration{900, 1800, 3600, 7200, 9000, 9000, 9000}
	for i, w := range want {
		d, err := lim.Allow(context.Background(), "k")
		must.ErrorIs(t, err, core.ErrBreakerOpen)
		must.Equal(t, w*time.Millisecond, d.RetryAfter, "interval %d", i)
		clk.Advance(d.RetryAfter)
		failN(t, lim, 1) // the probe
	}
	expect.Equal(t, int64(5+len(want)), st.calls.Load())
}

func TestBreakerSuccessRestartsTheCount(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	for range 3 {
		st.down.Store(true)
		failN(t, lim, 4)
		st.down.Store(false)
		_, err := lim.Allow(context.Background(), "k")
		must.NoError(t, err)
	}
	expect.Equal(t, core.BreakerClosed, lim.BreakerState(), "12 failures, never 5 in a row")
}

func TestBreakerIgnoresErrorsThatSayNothingOfTheStore(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name  string
		fail  error
		ctx   func() (context.Context, context.CancelFunc)
		opens bool
	}{
		{"full store", core.ErrStoreFull, nil, false},
		{"bad time", core.ErrClock, nil, false},
		{"caller canceled", context.Canceled, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, func() {}
		}, false},
		{"the store call's timeout", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return core.WithStoreTimeout(context.Background(), -time.Second)
		}, true},
		// A client's own deadline (a gRPC grpc-timeout of 1 ns) runs out:
		// the caller gave up, the store did nothing wrong. Counting it would
		// let any client open the breaker for every other.
		{"the caller's deadline", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(1, 0))
		}, false},
		{"the caller's deadline inside the store timeout", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			caller, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
			ctx, cancel2 := core.WithStoreTimeout(caller, time.Hour)
			return ctx, func() { cancel2(); cancel() }
		}, false},
		{"a store error before any deadline", errors.New("i/o timeout"), func() (context.Context, context.CancelFunc) {
			return core.WithStoreTimeout(context.Background(), time.Hour)
		}, true},
		// A client's socket deadline (go-redis sets the context's) fires a
		// hair before the context is marked done: the error is the caller's
		// deadline's doing all the same, unless that deadline is the store
		// call's own.
		{"a socket timeout at the caller's deadline", errors.New("i/o timeout"), func() (context.Context, context.CancelFunc) {
			caller, cancel := context.WithTimeout(context.Background(), 500*time.Microsecond)
			ctx, cancel2 := core.WithStoreTimeout(caller, time.Hour)
			return ctx, func() { cancel2(); cancel() }
		}, false},
		{"a socket timeout at the store's deadline", errors.New("i/o timeout"), func() (context.Context, context.CancelFunc) {
			return core.WithStoreTimeout(context.Background(), 500*time.Microsecond)
		}, true},
		{"closed store", core.ErrStoreClosed, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSwitchStore(t, clk)
			st.fail = tc.fail
			st.down.Store(true)
			lim := breakerLimiter(t, st, clk)
			for range 10 {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tc.ctx != nil {
					ctx, cancel = tc.ctx()
				}
				_, err := lim.Allow(ctx, "k")
				cancel()
				must.Error(t, err)
			}
			expect.Equal(t, tc.opens, lim.BreakerState() == core.BreakerOpen)
		})
	}
}

func TestBreakerProbesOneCallAtATime(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	st.down.Store(true)
	failN(t, lim, 5)
	clk.Advance(time.Second)

	st.holding.Store(true)
	st.down.Store(false)
	probed := make(chan error)
	go func() {
		_, err := lim.Allow(context.Background(), "k")
		probed <- err
	}()
	must.Eventually(t, func() bool { return lim.BreakerState() == core.BreakerHalfOpen }, 5*time.Second, time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := lim.Allow(context.Background(), "k")
			expect.ErrorIs(t, err, core.ErrBreakerOpen, "a second call while the probe is under way")
		})
	}
	wg.Wait()
	expect.Equal(t, int64(6), st.calls.Load(), "only the probe reached the store")
	close(st.hold)
	must.NoError(t, <-probed)
	expect.Equal(t, core.BreakerClosed, lim.BreakerState())
}

func TestBreakerProbeThatNeverReturnsFreesTheNext(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	st.down.Store(true)
	failN(t, lim, 5)
	clk.Advance(time.Second)
	st.holding.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = lim.Allow(context.Background(), "k") // the probe, stuck
	}()
	must.Eventually(t, func() bool { return st.calls.Load() == 6 }, 5*time.Second, time.Millisecond)
	d, err := lim.Allow(context.Background(), "k")
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	expect.Equal(t, 900*time.Millisecond, d.RetryAfter, "the stuck probe holds the others off one interval")
	clk.Advance(d.RetryAfter)
	st.holding.Store(false)
	st.down.Store(false)
	_, err = lim.Allow(context.Background(), "k")
	must.NoError(t, err, "a second probe goes when the first outlives its interval")
	expect.Equal(t, core.BreakerClosed, lim.BreakerState())
	close(st.hold)
	<-done
}

func TestBreakerTiersShareIt(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk)
	paid, err := lim.Tier("paid", core.PerMinute(1000))
	must.NoError(t, err)
	st.down.Store(true)
	failN(t, lim, 5)
	_, err = paid.Allow(context.Background(), "k")
	must.ErrorIs(t, err, core.ErrBreakerOpen)
	expect.Equal(t, core.BreakerOpen, paid.BreakerState())
}

func TestWithoutBreakerAsksEveryTime(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newSwitchStore(t, clk)
	lim := breakerLimiter(t, st, clk, core.WithoutBreaker())
	st.down.Store(true)
	failN(t, lim, 50)
	expect.Equal(t, int64(50), st.calls.Load())
	expect.Equal(t, core.BreakerClosed, lim.BreakerState())
}

func TestBreakerJitterSource(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"zero", 0, time.Second},
		{"almost one", 0.999, time.Second - time.Duration(float64(time.Second)*0.2*0.999)},
		{"out of range: no jitter", 7, time.Second},
		{"NaN: no jitter", math.NaN(), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSwitchStore(t, clk)
			b := core.DefaultBreaker()
			b.Rand = func() float64 { return tc.r }
			lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1), core.WithClock(clk), core.WithBreaker(b))
			must.NoError(t, err)
			st.down.Store(true)
			failN(t, lim, 5)
			d, err := lim.Allow(context.Background(), "k")
			must.ErrorIs(t, err, core.ErrBreakerOpen)
			expect.Equal(t, tc.want, d.RetryAfter)
		})
	}
}

func TestWithBreakerRefusesBadSettings(t *testing.T) {
	st := newSwitchStore(t, core.SystemClock{})
	for _, tc := range []struct {
		name string
		edit func(*core.BreakerConfig)
	}{
		{"no failures", func(c *core.BreakerConfig) { c.Failures = 0 }},
		{"negative failures", func(c *core.BreakerConfig) { c.Failures = -3 }},
		{"zero MinOpen", func(c *core.BreakerConfig) { c.MinOpen = 0 }},
		{"negative MinOpen", func(c *core.BreakerConfig) { c.MinOpen = -time.Second }},
		{"MaxOpen below MinOpen", func(c *core.BreakerConfig) { c.MaxOpen = c.MinOpen / 2 }},
		{"negative jitter", func(c *core.BreakerConfig) { c.Jitter = -0.1 }},
		{"jitter of one", func(c *core.BreakerConfig) { c.Jitter = 1 }},
		{"NaN jitter", func(c *core.BreakerConfig) { c.Jitter = math.NaN() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := core.DefaultBreaker()
			tc.edit(&c)
			_, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1), core.WithBreaker(c))
			must.ErrorIs(t, err, core.ErrInvalidOption)
		})
	}
	huge := core.DefaultBreaker()
	huge.MaxOpen = math.MaxInt64
	_, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1), core.WithBreaker(huge))
	must.NoError(t, err, "an interval without a cap that matters is allowed")
}

func TestBreakerStateString(t *testing.T) {
	for s, want := range map[core.BreakerState]string{
		core.BreakerClosed: "closed", core.BreakerOpen: "open", core.BreakerHalfOpen: "half_open", 0: "unknown", 9: "unknown",
	} {
		expect.Equal(t, want, s.String())
	}
}

// BenchmarkBreaker is a decision on the memory store with the breaker on
// (the default) and off: the difference is its cost, and it allocates
// nothing.
func BenchmarkBreaker(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []core.Option
	}{
		{"on", nil},
		{"off", []core.Option{core.WithoutBreaker()}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st, err := memory.New()
			must.NoError(b, err)
			defer st.Close()
			lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000), tc.opts...)
			must.NoError(b, err)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lim.Allow(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
