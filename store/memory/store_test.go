package memory_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

func newStore(t *testing.T, opts ...memory.Option) *memory.Store {
	t.Helper()
	st, err := memory.New(opts...)
	must.NoError(t, err)
	t.Cleanup(func() { must.NoError(t, st.Close()) })
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store { return newStore(t) })
}

// A tiny bound forces evictions and table rebuilds in the middle of the
// scripts; keys that are not evicted must still decide exactly.
func TestConformanceSmallShards(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store { return newStore(t, memory.WithShards(1)) })
}

func TestNewRejectsBadOptions(t *testing.T) {
	cases := map[string]memory.Option{
		"zero max keys":     memory.WithMaxKeys(0),
		"negative max keys": memory.WithMaxKeys(-5),
		"zero shards":       memory.WithShards(0),
		"shards not pow2":   memory.WithShards(3),
		"too many shards":   memory.WithShards(1 << 17),
		"nil clock":         memory.WithClock(nil),
		"negative sweep":    memory.WithSweepInterval(-time.Second),
		"nil option":        nil,
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := memory.New(opt)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Nil(t, st)
		})
	}
}

func TestClosedStore(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	must.NoError(t, st.Close())
	must.NoError(t, st.Close(), "Close is idempotent")
	_, err = st.Take(context.Background(), take("k", core.GCRA, core.PerSecond(1), storetest.Start))
	must.ErrorIs(t, err, core.ErrStoreClosed)
	must.ErrorIs(t, st.Reset(context.Background(), take("k", core.GCRA, core.PerSecond(1), storetest.Start)), core.ErrStoreClosed)
}

func take(key string, alg core.Algorithm, l core.Limit, now time.Time) core.TakeRequest {
	return core.TakeRequest{Key: key, Algorithm: alg, Limits: []core.Limit{l}, Cost: 1, Now: now}
}

func TestBoundHoldsAndRecoveredStateIsDropped(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithMaxKeys(100), memory.WithShards(4), memory.WithSweepInterval(0))
			ctx := context.Background()
			l := core.PerMinute(10)
			for i := range 1000 {
				d, err := st.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
				must.True(t, d.Allowed, "a fresh key is admitted")
				must.LessOrEqual(t, st.Len(), 100)
			}
			expect.Equal(t, 100, st.Len())
			// The bound is exact even when it does not divide by the shards.
			odd := newStore(t, memory.WithMaxKeys(7), memory.WithShards(4), memory.WithSweepInterval(0))
			for i := range 100 {
				_, err := odd.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			expect.Equal(t, 7, odd.Len())
			tiny := newStore(t, memory.WithMaxKeys(2), memory.WithShards(64), memory.WithSweepInterval(0))
			for i := range 100 {
				_, err := tiny.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			expect.Equal(t, 2, tiny.Len())
			// A denied or peeking request on an unknown key stores nothing.
			req := take("peek", alg, l, storetest.Start)
			req.Cost = 0
			_, err := st.Take(ctx, req)
			must.NoError(t, err)
			expect.Equal(t, 100, st.Len())
			// Two periods on, every state has recovered and is dropped.
			clock := core.NewManualClock(storetest.Start.Add(2*time.Minute + time.Second))
			st2 := newStore(t, memory.WithMaxKeys(100), memory.WithShards(4), memory.WithSweepInterval(0), memory.WithClock(clock))
			for i := range 50 {
				_, err := st2.Take(ctx, take("k"+strconv.Itoa(i), alg, l, storetest.Start))
				must.NoError(t, err)
			}
			_, err = st2.Take(ctx, take("late", alg, l, clock.Now()))
			must.NoError(t, err)
			must.Equal(t, 51, st2.Len())
			st2.Sweep()
			expect.Equal(t, 1, st2.Len(), "only the late key's state is still live")
		})
	}
}

// A hot key that keeps sending is never evicted by a flood of unique keys:
// its count stays exact.
func TestHotKeySurvivesFlood(t *testing.T) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, memory.WithMaxKeys(1000), memory.WithShards(4), memory.WithSweepInterval(0))
			ctx := context.Background()
			hot := take("hot", alg, core.PerHour(100), storetest.Start)
			ref := storetest.NewReference()
			admitted, want := 0, 0
			for i := range 50_000 {
				now := storetest.Start.Add(time.Duration(i) * time.Millisecond)
				_, err := st.Take(ctx, take("flood"+strconv.Itoa(i), alg, core.PerHour(100), now))
				must.NoError(t, err)
				if i%10 == 0 {
					hot.Now = now
					d, err := st.Take(ctx, hot)
					must.NoError(t, err)
					if d.Allowed {
						admitted++
					}
					if d, _ := ref.Take(ctx, hot); d.Allowed {
						want++
					}
				}
			}
			expect.GreaterOrEqual(t, want, 100)
			expect.Equal(t, want, admitted, "the hot key got exactly what an unbounded store admits")
			expect.LessOrEqual(t, st.Len(), 1000)
		})
	}
}

func TestLongKeysCostNoMoreThanShortOnes(t *testing.T) {
	heap := func(keyLen int) uint64 {
		st := newStore(t, memory.WithSweepInterval(0))
		key := make([]byte, keyLen)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range 5000 {
			copy(key, strconv.Itoa(i))
			_, err := st.Take(context.Background(), take(string(key), core.GCRA, core.PerSecond(1), storetest.Start))
			must.NoError(t, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(st)
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	short, long := heap(8), heap(10<<10)
	expect.Less(t, float64(long), float64(short)*1.5+64<<10, "10 KB keys (%d B) cost about what 8 B keys do (%d B)", long, short)
}

func TestResetForgetsKey(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	for _, alg := range core.Algorithms() {
		req := take("r", alg, core.PerHour(1), storetest.Start)
		d, err := st.Take(ctx, req)
		must.NoError(t, err)
		must.True(t, d.Allowed)
		d, err = st.Take(ctx, req)
		must.NoError(t, err)
		must.False(t, d.Allowed)
		must.NoError(t, st.Reset(ctx, req))
		d, err = st.Take(ctx, req)
		must.NoError(t, err)
		expect.True(t, d.Allowed, alg.String())
	}
}

// Concurrent inserts, updates, sweeps and rebuilds on a small table: run with
// -race; every key's admissions must match its limit exactly.
func TestConcurrentChurn(t *testing.T) {
	st := newStore(t, memory.WithMaxKeys(1<<20), memory.WithShards(1), memory.WithSweepInterval(0))
	ctx := context.Background()
	const keys, workers = 200, 8
	var wg sync.WaitGroup
	admitted := make([][keys]int, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys * 10 {
				k := (i*7 + w) % keys
				alg := core.GCRA
				if k%2 == 1 {
					alg = core.SlidingLog
				}
				d, err := st.Take(ctx, take("c"+strconv.Itoa(k), alg, core.PerHour(5), storetest.Start))
				if !expect.NoError(t, err) {
					return
				}
				if d.Allowed {
					admitted[w][k]++
				}
				if i%97 == 0 {
					st.Sweep()
				}
			}
		}()
	}
	wg.Wait()
	for k := range keys {
		total := 0
		for w := range workers {
			total += admitted[w][k]
		}
		expect.Equal(t, 5, total, "key %d", k)
	}
}

func TestSweeperRunsAndCloseEndsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := core.NewManualClock(storetest.Start)
		st, err := memory.New(memory.WithSweepInterval(time.Minute), memory.WithClock(clock))
		must.NoError(t, err)
		_, err = st.Take(context.Background(), take("k", core.GCRA, core.PerSecond(1), storetest.Start))
		must.NoError(t, err)
		must.Equal(t, 1, st.Len())
		clock.Advance(2 * time.Second)
		// The sweep never runs ahead of the requests the store has seen, so
		// another key arrives at the new time; its own state is still live.
		_, err = st.Take(context.Background(), take("k2", core.GCRA, core.PerSecond(1), clock.Now()))
		must.NoError(t, err)
		must.Equal(t, 2, st.Len())
		time.Sleep(time.Minute + time.Second) // synctest's fake time: the sweeper's tick
		synctest.Wait()
		expect.Equal(t, 1, st.Len(), "the sweeper dropped the recovered key, kept the live one")
		must.NoError(t, st.Close())
		synctest.Wait() // no goroutine left behind, or synctest.Test fails
	})
}

// A request under invalid figures for a held meter is refused and leaves the
// interval the word was written under alone, so the next valid request
// decides on the word as it was.
func TestInvalidFiguresLeaveAHeldWordAlone(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	for _, n := range []int{1, 2} { // a word, an entry
		req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(5), core.Every(50, 24*time.Hour)}[:n], Cost: 3, Now: storetest.Start}
		_, err = st.Take(ctx, req)
		must.NoError(t, err)
		bad := req
		bad.Limits = append([]core.Limit{{Rate: 0, Period: time.Hour}}, req.Limits[1:]...)
		_, err = st.Take(ctx, bad)
		must.ErrorIs(t, err, core.ErrInvalidLimit)
		req.Limits[0], req.Cost = core.PerHour(10), 0
		d, err := st.Take(ctx, req)
		must.NoError(t, err)
		expect.Equal(t, int64(7), d.Remaining, "%d limits: 3 of 5/h re-expressed under 10/h", n)
	}
}
