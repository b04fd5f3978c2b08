package memory

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

func newTestStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	st, err := New(append([]Option{WithShards(1), WithSweepInterval(0)}, opts...)...)
	must.NoError(t, err)
	t.Cleanup(func() { must.NoError(t, st.Close()) })
	return st
}

// held returns the keys in each of the shard's tables: meters' words,
// packed windows, entries.
func held(st *Store) [3]int {
	sh := &st.shards[0]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return [3]int{sh.words.live, sh.windows.live, sh.entries.live}
}

func spend(t *testing.T, st *Store, key string, alg core.Algorithm, at time.Time, limits ...core.Limit) error {
	t.Helper()
	d, err := st.Take(context.Background(), core.TakeRequest{Key: key, Algorithm: alg, Limits: limits, Cost: 1, Now: at})
	if err == nil {
		must.True(t, d.Allowed, "%s's first request", key)
	}
	return err
}

// A key's state goes to the table it needs: a window under one limit whose
// state packs to the windows' words, any other window to an entry.
func TestWindowsKeepTheirOwnTable(t *testing.T) {
	cases := []struct {
		name   string
		alg    core.Algorithm
		limits []core.Limit
		want   [3]int
	}{
		{"gcra", core.GCRA, []core.Limit{core.PerSecond(10)}, [3]int{1, 0, 0}},
		{"fixed window", core.FixedWindow, []core.Limit{core.PerSecond(10)}, [3]int{0, 1, 0}},
		{"fixed window, 2^40 a period", core.FixedWindow, []core.Limit{core.Every(1<<40, (1<<40)*time.Microsecond)}, [3]int{0, 1, 0}},
		{"sliding window at the edge", core.SlidingWindow, []core.Limit{core.PerSecond(32767)}, [3]int{0, 1, 0}},
		{"sliding window beyond it", core.SlidingWindow, []core.Limit{core.PerSecond(32768)}, [3]int{0, 0, 1}},
		{"fixed window, two limits", core.FixedWindow, []core.Limit{core.PerSecond(10), core.PerMinute(100)}, [3]int{0, 0, 1}},
		{"sliding log", core.SlidingLog, []core.Limit{core.PerSecond(10)}, [3]int{0, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newTestStore(t)
			must.NoError(t, spend(t, st, "k", c.alg, t0, c.limits...))
			expect.Equal(t, c.want, held(st))
			req := core.TakeRequest{Key: "k", Algorithm: c.alg, Limits: c.limits}
			must.NoError(t, st.Reset(context.Background(), req))
			expect.Equal(t, [3]int{}, held(st), "Reset forgets it")
		})
	}
}

// The bound spans the three tables: a new key takes room from its own table
// while it holds a key, from the others otherwise.
func TestRoomAcrossTables(t *testing.T) {
	st := newTestStore(t, WithMaxKeys(4))
	hour := core.PerHour(1)
	for i := range 2 {
		must.NoError(t, spend(t, st, "m"+strconv.Itoa(i), core.GCRA, t0, hour))
		must.NoError(t, spend(t, st, "w"+strconv.Itoa(i), core.FixedWindow, t0, hour))
	}
	must.NoError(t, spend(t, st, "w2", core.SlidingWindow, t0, hour))
	expect.Equal(t, [3]int{2, 2, 0}, held(st), "a window evicted a window")
	for _, k := range []string{"w0", "w1", "w2"} {
		for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
			must.NoError(t, st.Reset(context.Background(), core.TakeRequest{Key: k, Algorithm: alg, Limits: []core.Limit{hour}}))
		}
	}
	must.NoError(t, spend(t, st, "m2", core.GCRA, t0, hour))
	must.NoError(t, spend(t, st, "m3", core.GCRA, t0, hour))
	must.NoError(t, spend(t, st, "w3", core.FixedWindow, t0, hour))
	expect.Equal(t, [3]int{3, 1, 0}, held(st), "with no window held, a window evicted a meter")
	expect.Equal(t, Stats{Keys: 4, Evictions: 2}, st.Stats())
}

// A full store that refuses new keys reclaims recovered state from any
// table for a new window, and refuses it when none has recovered.
func TestRefuseAcrossTables(t *testing.T) {
	st := newTestStore(t, WithMaxKeys(2), WithRefuseWhenFull())
	must.NoError(t, spend(t, st, "meter", core.GCRA, t0, core.PerSecond(1)))
	must.NoError(t, spend(t, st, "log", core.SlidingLog, t0, core.PerHour(1)))
	later := t0.Add(2 * time.Second)
	must.NoError(t, spend(t, st, "w0", core.FixedWindow, later, core.PerHour(1)))
	expect.Equal(t, [3]int{0, 1, 1}, held(st), "the recovered meter made room")
	err := spend(t, st, "w1", core.FixedWindow, later, core.PerHour(1))
	must.ErrorIs(t, err, core.ErrStoreFull)
	expect.Equal(t, Stats{Keys: 2, Refused: 1}, st.Stats())
}

// A window's word is swept exactly when its state has recovered: the fixed
// window's at its window's end, the sliding window's a period later (its
// count still weighs as the next window's previous one).
func TestSweepDropsRecoveredWindowWords(t *testing.T) {
	clock := core.NewManualClock(t0)
	st := newTestStore(t, WithClock(clock))
	minute := core.PerMinute(5)
	must.NoError(t, spend(t, st, "fixed", core.FixedWindow, t0, minute))
	must.NoError(t, spend(t, st, "sliding", core.SlidingWindow, t0, minute))
	end := t0.Truncate(time.Minute).Add(time.Minute)
	cases := []struct {
		at   time.Time
		want int
	}{
		{end.Add(-time.Microsecond), 2},
		{end, 1},
		{end.Add(time.Minute - time.Microsecond), 1},
		{end.Add(time.Minute), 0},
	}
	for i, c := range cases {
		clock.Set(c.at)
		// The sweep never runs ahead of the requests the store has seen: a
		// meter's key, live for an hour, brings it to the clock.
		must.NoError(t, spend(t, st, "probe"+strconv.Itoa(i), core.GCRA, c.at, core.PerHour(1)))
		st.Sweep()
		expect.Equal(t, [3]int{i + 1, c.want, 0}, held(st), "at %s", c.at)
	}
}
