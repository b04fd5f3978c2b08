package benchmarks

// What settling after the response costs on the memory store through a
// Limiter, beside a plain request: a reservation of 1 (AllowN) and its
// settle (Limiter.Settle) at a cost below it (a refund), above it (a
// charge, which on this limiter goes into its debt bound), or equal to it
// (no store call), under GCRA and the fixed window. A limiter with a debt
// bound and requests that never settle must cost what a plain one does: the
// "plain" rows of a limiter with and without a bound show it. Neither a
// decision nor a settle allocates; the benchmark fails if one does.
//
// BenchmarkSettleRedis is the same on Redis (redistest's server, the
// server's clock): a settle is one more script call, a refund or a charge,
// and a settle at the reservation none.
//
//	go test -run '^$' -bench '^BenchmarkSettle' -benchmem ./benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

func BenchmarkSettle(b *testing.B) {
	rows := []struct {
		name   string
		debt   int64
		actual int64 // -1: no settle
	}{
		{"plain", 0, -1},
		{"plain-with-debt-bound", 1000, -1},
		{"settle-equal", 1000, 1},
		{"settle-refund", 1000, 0},
		{"settle-charge", 1000, 3},
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow} {
		for _, row := range rows {
			b.Run(alg.String()+"/"+row.name, func(b *testing.B) {
				clk := core.NewManualClock(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
				st, err := memory.New(memory.WithSweepInterval(0))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				// A quota no loop exhausts: every request is admitted.
				lim, err := core.NewLimiter(st, alg, core.Every(1<<40, 720*time.Hour), core.WithClock(clk), core.WithoutBreaker(), core.WithDebt(row.debt))
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				step := func() {
					clk.Advance(time.Microsecond)
					d, err := lim.AllowN(ctx, "k", 1)
					if err != nil || !d.Allowed {
						b.Fatalf("%v %+v", err, d)
					}
					if row.actual >= 0 {
						if _, err := lim.Settle(ctx, "k", row.actual, &d); err != nil {
							b.Fatal(err)
						}
					}
				}
				step()
				if n := testing.AllocsPerRun(100, step); n != 0 {
					b.Fatalf("a request and its settle allocate %v times", n)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					step()
				}
			})
		}
	}
}

func BenchmarkSettleRedis(b *testing.B) {
	srv := redistest.Start(b)
	c := newRedisClients(b, srv.Addr())
	rows := []struct {
		name   string
		debt   int64
		actual int64 // -1: no settle
	}{
		{"plain", 0, -1},
		{"plain-with-debt-bound", 1000, -1},
		{"settle-equal", 1000, 1},
		{"settle-refund", 1000, 0},
		{"settle-charge", 1000, 3},
	}
	for _, row := range rows {
		b.Run("gcra/"+row.name, func(b *testing.B) {
			st, err := redisstore.New(c.rdb)
			if err != nil {
				b.Fatal(err)
			}
			lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40), core.WithDebt(row.debt))
			if err != nil {
				b.Fatal(err)
			}
			ctx, key := context.Background(), "bench:settle:"+row.name
			step := func() {
				d, err := lim.AllowN(ctx, key, 1)
				if err != nil || !d.Allowed {
					b.Fatalf("%v %+v", err, d)
				}
				if row.actual >= 0 {
					if _, err := lim.Settle(ctx, key, row.actual, &d); err != nil {
						b.Fatal(err)
					}
				}
			}
			step()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				step()
			}
		})
	}
}
