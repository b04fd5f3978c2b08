package benchmarks

// What a calendar quota costs beside the same quota over a plain period, on
// the memory store through a Limiter: a month in Europe/Berlin (windows of
// 28 to 31 days that move with daylight saving) against 30 days of 720
// hours, under the fixed and the sliding window. The calendar's window is
// computed once per boundary and cached, so a decision inside it reads two
// integers; the benchmark fails if a calendar decision allocates.
//
//	go test -run '^$' -bench '^BenchmarkCalendar' -benchmem ./benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

func BenchmarkCalendar(b *testing.B) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	rows := []struct {
		name  string
		limit core.Limit
	}{
		{"plain-720h", core.Every(1<<40, 720*time.Hour)},
		{"month-Europe-Berlin", core.Monthly(1 << 40).In("Europe/Berlin")},
		{"month-anchor-31", core.Monthly(1 << 40).AnchoredOn(31)},
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, row := range rows {
			b.Run(alg.String()+"/"+row.name, func(b *testing.B) {
				clk := core.NewManualClock(start)
				st, err := memory.New(memory.WithSweepInterval(0))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				lim, err := core.NewLimiter(st, alg, row.limit, core.WithClock(clk), core.WithoutBreaker())
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				allow := func() {
					clk.Advance(time.Microsecond)
					if d, err := lim.Allow(ctx, "k"); err != nil || !d.Allowed {
						b.Fatalf("%v %+v", err, d)
					}
				}
				allow()
				if row.limit.IsCalendar() {
					if n := testing.AllocsPerRun(100, allow); n != 0 {
						b.Fatalf("a calendar decision allocates %v times", n)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					allow()
				}
			})
		}
	}
}
