//go:build !race

package luascript

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// fixed is a Backend that replies with reply and allocates nothing.
type fixed struct{ reply []int64 }

func (fixed) ReadsIntegerReplies() bool { return true }

func (f fixed) Eval(_ context.Context, _ *Script, _, _ []string, dst []int64) ([]int64, error) {
	return append(dst, f.reply...), nil
}

// TestTakeAllocs pins what a decision costs the store itself, beside its
// client: one frame (KEYS, ARGV and the reply) and the key, plus the time's
// text in caller-clock mode, and with several limits their common key and one
// per limit; nothing for a denial answered from the cache.
func TestTakeAllocs(t *testing.T) {
	now := t0.UnixMicro()
	tests := []struct {
		name   string
		alg    core.Algorithm
		limits int
		reply  []int64
		opts   []Option
		want   float64
	}{
		{"gcra", core.GCRA, 1, []int64{0}, nil, 2},
		{"sliding window", core.SlidingWindow, 1, []int64{0}, nil, 2},
		{"sliding log", core.SlidingLog, 1, []int64{1, 0, 0, 999, 1_000_000, 0}, nil, 2},
		{"caller clock, min TTL", core.GCRA, 1, []int64{0}, []Option{WithCallerClock(), WithMinTTL(3600e9)}, 3},
		{"sliding window, four limits", core.SlidingWindow, 4, append([]int64{1, now}, make([]int64, 12)...), nil, 6},
		{"cached denial", core.GCRA, 1, []int64{-1 - 2_000_000}, []Option{WithCallerClock(), WithLocalCache(16)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(fixed{tt.reply}, append([]Option{WithLocalCache(0)}, tt.opts...)...)
			must.NoError(t, err)
			limits := []core.Limit{core.PerSecond(1000), core.PerMinute(10_000), core.PerHour(100_000), core.Every(1_000_000, 24*time.Hour)}
			req := core.TakeRequest{Key: "user-42", Algorithm: tt.alg, Limits: limits[:tt.limits], Cost: 1, Now: t0}
			_, err = s.Take(context.Background(), req)
			must.NoError(t, err)
			allocs := testing.AllocsPerRun(100, func() { _, _ = s.Take(context.Background(), req) })
			expect.Equal(t, tt.want, allocs)
		})
	}
}
