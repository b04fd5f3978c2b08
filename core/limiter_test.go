package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// recordingStore is the smallest correct Store: ApplyAll under a mutex. It records
// the last request, and fails when err is set.
type recordingStore struct {
	mu     sync.Mutex
	states map[string][]core.State
	last   core.TakeRequest
	calls  int
	err    error
}

func (m *recordingStore) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.calls = req, m.calls+1
	if m.err != nil {
		return core.Decision{}, m.err
	}
	if m.states == nil {
		m.states = map[string][]core.State{}
	}
	k := req.Namespace + "\x00" + req.Key
	st, ok := m.states[k]
	if !ok {
		st = make([]core.State, len(req.Limits))
		m.states[k] = st
	}
	return req.Algorithm.ApplyAll(st, req.Limits, req.Cost, core.Micros(req.Now))
}

// newMemStore returns a memory store without a sweeper goroutine, closed
// when the test ends.
func newMemStore(t *testing.T) *memory.Store {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { must.NoError(t, st.Close()) })
	return st
}

func TestNewLimiterRejects(t *testing.T) {
	st := &recordingStore{}
	nine := make([]core.Option, 0, 8)
	for i := range 8 {
		nine = append(nine, core.WithLimit(core.PerMinute(int64(10+i))))
	}
	tests := []struct {
		name  string
		store core.Store
		alg   core.Algorithm
		limit core.Limit
		opts  []core.Option
		err   error
		msg   string
	}{
		{"nil store", nil, core.GCRA, core.PerSecond(1), nil, core.ErrInvalidOption, "nil store"},
		{"zero algorithm", st, 0, core.PerSecond(1), nil, core.ErrInvalidAlgorithm, "invalid algorithm"},
		{"unknown algorithm", st, 42, core.PerSecond(1), nil, core.ErrInvalidAlgorithm, "42"},
		{"zero limit", st, core.GCRA, core.Limit{}, nil, core.ErrInvalidLimit, "rate must be positive"},
		{"negative burst", st, core.GCRA, core.PerSecond(1).WithBurst(-2), nil, core.ErrInvalidLimit, "burst must not be negative"},
		{"burst on fixed window", st, core.FixedWindow, core.PerSecond(10).WithBurst(20), nil, core.ErrInvalidLimit, "takes no burst"},
		{"burst on sliding window", st, core.SlidingWindow, core.PerSecond(10).WithBurst(5), nil, core.ErrInvalidLimit, "takes no burst"},
		{"burst on sliding log", st, core.SlidingLog, core.PerSecond(10).WithBurst(11), nil, core.ErrInvalidLimit, "takes no burst"},
		{"sliding log rate", st, core.SlidingLog, core.PerHour(core.MaxLogRate + 1), nil, core.ErrInvalidLimit, "capped at 100000"},
		{"invalid added limit", st, core.GCRA, core.PerSecond(1), []core.Option{core.WithLimit(core.PerHour(0))}, core.ErrInvalidLimit, "rate must be positive"},
		{"nil clock", st, core.GCRA, core.PerSecond(1), []core.Option{core.WithClock(nil)}, core.ErrInvalidOption, "nil clock"},
		{"nil option", st, core.GCRA, core.PerSecond(1), []core.Option{nil}, core.ErrInvalidOption, "nil option"},
		{"nine limits", st, core.GCRA, core.PerSecond(1), nine, core.ErrInvalidOption, "9 limits, at most 8"},
		{"long namespace", st, core.GCRA, core.PerSecond(1), []core.Option{core.WithNamespace(strings.Repeat("n", 257))}, core.ErrInvalidOption, "namespace"},
		{"quote in name", st, core.GCRA, core.PerSecond(1).Named(`x"y`), nil, core.ErrInvalidLimit, "quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := core.NewLimiter(tt.store, tt.alg, tt.limit, tt.opts...)
			must.ErrorIs(t, err, tt.err)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, l)
		})
	}
	// Eight limits in all is the most, and fine.
	_, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1), nine[:7]...)
	must.NoError(t, err)
}

func TestLimiterAccessors(t *testing.T) {
	st := &recordingStore{}
	clk := core.NewManualClock(time.UnixMicro(hms(0, 0, 0)))
	l, err := core.NewLimiter(st, core.TokenBucket, core.Limit{Rate: 10, Period: time.Second},
		core.WithLimit(core.PerHour(1000)), core.WithLimit(core.Every(10000, 24*time.Hour).Named("daily")), core.WithClock(clk))
	must.NoError(t, err)
	expect.Equal(t, core.TokenBucket, l.Algorithm())
	expect.Same(t, st, l.Store().(*recordingStore))
	limits := l.Limits()
	must.Len(t, limits, 3)
	expect.Equal(t, []string{"default", "1000/h", "daily"}, []string{limits[0].Name, limits[1].Name, limits[2].Name})
	expect.Equal(t, int64(10), limits[0].Burst, "burst 0 becomes the rate")
	limits[0].Rate = 1
	expect.Equal(t, int64(10), l.Limits()[0].Rate, "Limits returns a copy")

	// The limiter decides on its clock.
	_, err = l.Allow(context.Background(), "k")
	must.NoError(t, err)
	expect.Equal(t, clk.Now(), st.last.Now)
}

func TestLimiterAllow(t *testing.T) {
	for _, useMemory := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", useMemory), func(t *testing.T) {
			var st core.Store = &recordingStore{}
			if useMemory {
				st = newMemStore(t)
			}
			clk := core.NewManualClock(time.UnixMicro(hms(8, 0, 0)))
			l, err := core.NewLimiter(st, core.GCRA, core.PerSecond(2), core.WithLimit(core.PerMinute(3)), core.WithClock(clk))
			must.NoError(t, err)
			ctx := context.Background()

			d, err := l.Allow(ctx, "alice")
			must.NoError(t, err)
			expect.True(t, d.Allowed)
			expect.Equal(t, int64(1), d.Remaining)
			d, err = l.Allow(ctx, "alice")
			must.NoError(t, err)
			expect.True(t, d.Allowed)
			expect.Equal(t, int64(0), d.Remaining)
			// The per-second limit denies: a whole token in 500 ms.
			d, err = l.Allow(ctx, "alice")
			must.NoError(t, err)
			expect.False(t, d.Allowed)
			expect.Equal(t, 0, d.Index)
			expect.Equal(t, 500*time.Millisecond, d.RetryAfter)
			expect.Equal(t, "default", d.Limit.Name)
			// Another key is not affected.
			d, err = l.Allow(ctx, "bob")
			must.NoError(t, err)
			expect.True(t, d.Allowed)

			clk.Advance(500 * time.Millisecond)
			d, err = l.Allow(ctx, "alice")
			must.NoError(t, err)
			expect.True(t, d.Allowed, "the third of the minute")
			clk.Advance(time.Second)
			// The per-minute limit is spent; the per-second one is not.
			d, err = l.Allow(ctx, "alice")
			must.NoError(t, err)
			expect.False(t, d.Allowed)
			expect.Equal(t, 1, d.Index)
			expect.Equal(t, "3/m", d.Limit.Name)
			expect.Equal(t, 18500*time.Millisecond, d.RetryAfter, "one of 3/min: 20 s after the first")

			// A peek, a cost that can never fit, a negative cost.
			d, err = l.AllowN(ctx, "alice", 0)
			must.NoError(t, err)
			expect.Equal(t, int64(0), d.Remaining)
			d, err = l.AllowN(ctx, "alice", 4)
			must.NoError(t, err)
			expect.True(t, d.Exceeds)
			expect.False(t, d.Allowed)
			_, err = l.AllowN(ctx, "alice", -1)
			must.ErrorIs(t, err, core.ErrInvalidCost)
		})
	}
}

func TestLimiterPassesTheRequest(t *testing.T) {
	st := &recordingStore{}
	clk := core.NewManualClock(time.UnixMicro(hms(9, 0, 0)))
	l, err := core.NewLimiter(st, core.SlidingLog, core.PerMinute(5), core.WithNamespace("login"), core.WithClock(clk))
	must.NoError(t, err)
	_, err = l.AllowN(context.Background(), "10.0.0.1", 2)
	must.NoError(t, err)
	expect.Equal(t, "10.0.0.1", st.last.Key)
	expect.Equal(t, "login", st.last.Namespace)
	expect.Equal(t, core.SlidingLog, st.last.Algorithm)
	expect.Equal(t, int64(2), st.last.Cost)
	expect.Equal(t, clk.Now(), st.last.Now)
	expect.Equal(t, l.Limits(), st.last.Limits)

	// A negative cost never reaches the store.
	calls := st.calls
	_, err = l.AllowN(context.Background(), "10.0.0.1", -3)
	must.ErrorIs(t, err, core.ErrInvalidCost)
	expect.Equal(t, calls, st.calls)

	// A store's error is returned as is: it is not a decision.
	boom := errors.New("store down")
	st.err = boom
	d, err := l.Allow(context.Background(), "10.0.0.1")
	must.ErrorIs(t, err, boom)
	expect.Equal(t, core.Decision{}, d)
	_, err = l.Wait(context.Background(), "10.0.0.1")
	must.ErrorIs(t, err, boom)
}
