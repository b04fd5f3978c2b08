package benchmarks

// What a penalty box (core.WithBlockFor) costs on the memory store through a
// Limiter, beside the same limit without one: an admitted request (a
// penalty box keeps its key in an entry with the block's end, where a
// rate-only meter is one lock-free word), a denial, and a request the block
// refuses (decided as a peek). None allocates once the key is held; the
// benchmark fails if one does.
//
// BenchmarkPenaltyRedis is the same on Redis (redistest's server, the
// server's clock): a penalty box's request is still one script call (its
// "+block" script reads the block's key beside the state), and a request the
// block refuses is answered by the local cache of denials until the block's
// end, with no call, or, with the cache off, by one call that decides a peek.
//
//	go test -run '^$' -bench '^BenchmarkPenalty' -benchmem ./benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

func BenchmarkPenalty(b *testing.B) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	rows := []struct {
		name  string
		limit core.Limit
		block time.Duration
		step  time.Duration // the clock's step per request
		want  func(core.Decision) bool
	}{
		{"rate-only/allowed", core.Every(1<<40, 720*time.Hour), 0, time.Microsecond, func(d core.Decision) bool { return d.Allowed }},
		{"block/allowed", core.Every(1<<40, 720*time.Hour), time.Minute, time.Microsecond, func(d core.Decision) bool { return d.Allowed }},
		{"rate-only/denied", core.PerHour(1), 0, 0, func(d core.Decision) bool { return !d.Allowed && !d.Blocked }},
		{"block/blocked", core.PerHour(1), 1000 * time.Hour, time.Microsecond, func(d core.Decision) bool { return d.Blocked }},
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow} {
		for _, row := range rows {
			b.Run(alg.String()+"/"+row.name, func(b *testing.B) {
				clk := core.NewManualClock(start)
				st, err := memory.New(memory.WithSweepInterval(0))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				opts := []core.Option{core.WithClock(clk), core.WithoutBreaker()}
				if row.block > 0 {
					opts = append(opts, core.WithBlockFor(row.block))
				}
				lim, err := core.NewLimiter(st, alg, row.limit, opts...)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				for range 2 { // hold the key; for the denials, spend it (and start the block)
					if _, err := lim.Allow(ctx, "k"); err != nil {
						b.Fatal(err)
					}
				}
				allow := func() {
					clk.Advance(row.step)
					if d, err := lim.Allow(ctx, "k"); err != nil || !row.want(d) {
						b.Fatalf("%v %+v", err, d)
					}
				}
				if n := testing.AllocsPerRun(100, allow); n != 0 {
					b.Fatalf("a decision allocates %v times", n)
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

func BenchmarkPenaltyRedis(b *testing.B) {
	srv := redistest.Start(b)
	c := newRedisClients(b, srv.Addr())
	plenty := core.PerSecond(1_000_000).WithBurst(1 << 40)
	rows := []struct {
		name    string
		limit   core.Limit
		block   time.Duration
		cache   bool
		blocked bool // the rows' requests are refused by the block
	}{
		{"rate-only/allowed", plenty, 0, true, false},
		{"block/allowed", plenty, time.Hour, true, false},
		{"block/blocked-cached", core.PerHour(1), time.Hour, true, true},
		{"block/blocked-no-cache", core.PerHour(1), time.Hour, false, true},
	}
	for _, row := range rows {
		b.Run("gcra/"+row.name, func(b *testing.B) {
			var opts []luascript.Option
			if !row.cache {
				opts = append(opts, luascript.WithLocalCache(0))
			}
			st, err := redisstore.New(c.rdb, opts...)
			if err != nil {
				b.Fatal(err)
			}
			var lopts []core.Option
			if row.block > 0 {
				lopts = append(lopts, core.WithBlockFor(row.block))
			}
			lim, err := core.NewLimiter(st, core.GCRA, row.limit, lopts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx, key := context.Background(), "bench:penalty:"+row.name
			if err := lim.Reset(ctx, key); err != nil {
				b.Fatal(err)
			}
			for range 2 { // hold the key; for the blocked rows, start the block
				if _, err := lim.Allow(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
			step := func() {
				d, err := lim.Allow(ctx, key)
				if err != nil || d.Allowed == row.blocked || d.Blocked != row.blocked {
					b.Fatalf("%v %+v", err, d)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				step()
			}
		})
	}
}
