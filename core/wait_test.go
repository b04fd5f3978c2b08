package core_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// timerClock reads time.Now: inside a synctest bubble, the bubble's fake time,
// the clock the timers that Wait uses run on.
type timerClock struct{ offset time.Duration }

func (c timerClock) Now() time.Time { return time.Now().Add(c.offset) }

func TestLimiterWait(t *testing.T) {
	tests := []struct {
		name string
		alg  core.Algorithm
	}{
		{"gcra", core.GCRA},
		{"token bucket", core.TokenBucket},
		{"fixed window", core.FixedWindow},
		{"sliding log", core.SlidingLog},
		{"sliding window", core.SlidingWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := core.NewLimiter(newMemStore(t), tt.alg, core.PerSecond(2), core.WithClock(timerClock{}))
				must.NoError(t, err)
				ctx := context.Background()
				start := time.Now()
				for range 2 {
					d, err := l.Wait(ctx, "k")
					must.NoError(t, err)
					expect.True(t, d.Allowed)
				}
				expect.Zero(t, time.Since(start), "the first two pass at once")
				d, err := l.Wait(ctx, "k")
				must.NoError(t, err)
				expect.True(t, d.Allowed)
				waited := time.Since(start)
				expect.Positive(t, waited)
				expect.LessOrEqual(t, waited, 2*time.Second, "the sliding window waits into the next window")
				// The wait was exactly what the denial said.
				l2, err := core.NewLimiter(newMemStore(t), tt.alg, core.PerSecond(2), core.WithClock(core.NewManualClock(start)))
				must.NoError(t, err)
				var denied core.Decision
				for range 3 {
					denied, err = l2.Allow(ctx, "k")
					must.NoError(t, err)
				}
				must.False(t, denied.Allowed)
				expect.Equal(t, denied.RetryAfter, waited)
			})
		})
	}
}

// The leaky bucket admits at once into its queue, and Wait holds the request
// for its Delay: the callers leave one emission interval apart.
func TestLimiterWaitLeakyBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := core.NewLimiter(newMemStore(t), core.LeakyBucket, core.PerSecond(10).WithBurst(3), core.WithClock(timerClock{}))
		must.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		var left []time.Duration
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				d, err := l.Wait(context.Background(), "k")
				expect.NoError(t, err)
				expect.True(t, d.Allowed)
				mu.Lock()
				left = append(left, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		ms := time.Millisecond
		// Three fit the queue at once and leave at 0, 100 and 200 ms; the other
		// two are denied, retry when the queue has room, and leave at 300 and
		// 400 ms.
		expect.ElementsMatch(t, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}, left)
	})
}

// exhausted returns a limiter of 1/s on clk whose key "k" has just spent its
// one token.
func exhausted(t *testing.T, clk core.Clock) *core.Limiter {
	t.Helper()
	l, err := core.NewLimiter(newMemStore(t), core.GCRA, core.PerSecond(1), core.WithClock(clk))
	must.NoError(t, err)
	d, err := l.Allow(context.Background(), "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	return l
}

func TestLimiterWaitGivesUpOnCancel(t *testing.T) {
	t.Run("context cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := exhausted(t, timerClock{})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			d, err := l.Wait(ctx, "k")
			must.ErrorIs(t, err, context.Canceled)
			expect.False(t, d.Allowed)
			expect.Equal(t, 300*time.Millisecond, time.Since(start))
			// Nothing was spent: the next token is still due at 1 s.
			d, err = l.AllowN(context.Background(), "k", 0)
			must.NoError(t, err)
			expect.Equal(t, int64(0), d.Remaining)
			time.Sleep(700 * time.Millisecond) // fake time, inside the bubble
			d, err = l.Allow(context.Background(), "k")
			must.NoError(t, err)
			expect.True(t, d.Allowed)
		})
	})
	t.Run("context already ended", func(t *testing.T) {
		st := &recordingStore{}
		l, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1), core.WithClock(core.NewManualClock(time.UnixMicro(hms(0, 0, 0)))))
		must.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		d, err := l.Wait(ctx, "k")
		must.ErrorIs(t, err, context.Canceled)
		expect.Equal(t, core.Decision{}, d)
		expect.Zero(t, st.calls, "nothing spent")
	})
}

func TestLimiterWaitGivesUpAtDeadline(t *testing.T) {
	t.Run("deadline too close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := exhausted(t, timerClock{})
			ctx, cancel := context.WithTimeout(context.Background(), 999*time.Millisecond)
			defer cancel()
			start := time.Now()
			d, err := l.Wait(ctx, "k")
			must.ErrorIs(t, err, core.ErrWouldExceed)
			expect.Contains(t, err.Error(), "next admission in 1s")
			expect.False(t, d.Allowed)
			expect.Zero(t, time.Since(start), "gives up at once")
		})
	})
	t.Run("deadline far enough", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := exhausted(t, timerClock{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second+time.Millisecond)
			defer cancel()
			start := time.Now()
			d, err := l.Wait(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.Allowed)
			expect.Equal(t, time.Second, time.Since(start))
		})
	})
	// The limiter's clock may disagree with the timers' (a store's server
	// time, a clock set years ahead): the deadline is measured on the timers'.
	t.Run("deadline with an offset clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := exhausted(t, timerClock{offset: 30 * 365 * 24 * time.Hour})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			d, err := l.Wait(ctx, "k")
			must.NoError(t, err)
			expect.True(t, d.Allowed)
			expect.Equal(t, time.Second, time.Since(start))
		})
	})
}

func TestLimiterWaitRejectsCost(t *testing.T) {
	t.Run("cost above capacity", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := exhausted(t, timerClock{})
			start := time.Now()
			d, err := l.WaitN(context.Background(), "k", 2)
			must.ErrorIs(t, err, core.ErrWouldExceed)
			expect.Contains(t, err.Error(), "cost 2 exceeds the capacity of 1/s")
			expect.True(t, d.Exceeds)
			expect.Zero(t, time.Since(start))
		})
	})
	t.Run("negative cost", func(t *testing.T) {
		l := exhausted(t, core.NewManualClock(time.UnixMicro(hms(0, 0, 0))))
		_, err := l.WaitN(context.Background(), "k", -1)
		must.ErrorIs(t, err, core.ErrInvalidCost)
	})
}

// A leaky-bucket request admitted into the queue waits out its Delay, unless
// the deadline cannot cover it (then it spends nothing) or ctx ends first.
func TestLimiterWaitLeakyBucketGivesUp(t *testing.T) {
	t.Run("leaky bucket delay past the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, err := core.NewLimiter(newMemStore(t), core.LeakyBucket, core.PerSecond(1).WithBurst(5), core.WithClock(timerClock{}))
			must.NoError(t, err)
			_, err = l.Allow(context.Background(), "k")
			must.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 999*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = l.Wait(ctx, "k")
			must.ErrorIs(t, err, core.ErrWouldExceed)
			expect.Contains(t, err.Error(), "queued for 1s")
			expect.Zero(t, time.Since(start), "gives up at once")
			// The queue was not touched: the next request still gets the 1 s slot.
			d, err := l.Allow(context.Background(), "k")
			must.NoError(t, err)
			expect.Equal(t, time.Second, d.Delay)
			// With a deadline that leaves time for the Delay, it waits it out.
			ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second+time.Millisecond)
			defer cancel()
			d, err = l.Wait(ctx, "k")
			must.NoError(t, err)
			expect.Equal(t, 2*time.Second, d.Delay)
			expect.Equal(t, 2*time.Second, time.Since(start))
		})
	})
	t.Run("leaky bucket delay cut by cancel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, err := core.NewLimiter(newMemStore(t), core.LeakyBucket, core.PerSecond(1).WithBurst(5), core.WithClock(timerClock{}))
			must.NoError(t, err)
			_, err = l.Allow(context.Background(), "k")
			must.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			d, err := l.Wait(ctx, "k")
			// Admitted into the queue (its slot is spent), then abandoned.
			must.ErrorIs(t, err, context.Canceled)
			expect.True(t, d.Allowed)
			expect.Equal(t, time.Second, d.Delay)
			expect.Equal(t, 200*time.Millisecond, time.Since(start))
		})
	})
}
