package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// BenchmarkTake: one goroutine decides on one held key through a Limiter's
// store call, for every algorithm under one limit no run reaches: the
// store's own cost per decision, without the contention of the hot-key rows.
func BenchmarkTake(b *testing.B) {
	for _, alg := range core.Algorithms() {
		b.Run(alg.String(), func(b *testing.B) {
			clk := core.NewManualClock(storetest.Start)
			st, err := memory.New(memory.WithSweepInterval(0))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			lim, err := core.NewLimiter(st, alg, core.PerSecond(100_000), core.WithClock(clk), core.WithoutBreaker())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i&63 == 0 {
					clk.Advance(time.Millisecond) // stays under the limit
				}
				if d, err := lim.Allow(ctx, "k"); err != nil || !d.Allowed {
					b.Fatalf("decision %d: %v %+v", i, err, d)
				}
			}
		})
	}
}

// BenchmarkTakeDenied: one goroutine decides on one held key whose one
// request an hour is spent, for every algorithm: the denied path.
func BenchmarkTakeDenied(b *testing.B) {
	for _, alg := range core.Algorithms() {
		b.Run(alg.String(), func(b *testing.B) {
			clk := core.NewManualClock(storetest.Start)
			st, err := memory.New(memory.WithSweepInterval(0))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			lim, err := core.NewLimiter(st, alg, core.PerHour(1), core.WithClock(clk), core.WithoutBreaker())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if d, err := lim.Allow(ctx, "k"); err != nil || !d.Allowed {
				b.Fatalf("the first request: %v %+v", err, d)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if d, err := lim.Allow(ctx, "k"); err != nil || d.Allowed {
					b.Fatalf("decision %d: %v %+v", i, err, d)
				}
			}
		})
	}
}
