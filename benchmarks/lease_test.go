package benchmarks

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The hot key of issue 21: one key, leaseInstances limiter instances in one
// process (each its own go-redis client and store) x leaseGoroutines
// goroutines, one local redis-server, a limit of 10,000/s. Each row reports
// decisions/s, admitted/s, Redis script calls per decision (EVALSHA and
// EVAL from INFO commandstats, reset before the row) and the p99 and p999
// of a decision, for the one-call path (no lease) and token leases of up to
// leaseMax in the same run:
//
//	go test -run '^$' -bench 'RedisLease$' -benchtime=200000x ./benchmarks/
const (
	leaseInstances  = 8
	leaseGoroutines = 64
	leaseMax        = 50
	leaseTTL        = 100 * time.Millisecond
)

// BenchmarkRedisLease compares the one-call path with token leases on one
// hot key, for GCRA and the fixed window.
func BenchmarkRedisLease(b *testing.B) {
	srv := redistest.Start(b)
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { admin.Close() })
	for _, alg := range []core.Algorithm{core.GCRA, core.FixedWindow} {
		for _, lease := range []int64{0, leaseMax} {
			name := fmt.Sprintf("%s/one-call", alg)
			if lease > 0 {
				name = fmt.Sprintf("%s/lease=%d", alg, lease)
			}
			b.Run(name, func(b *testing.B) {
				runLeaseRow(b, leaseInstancesOf(b, srv.Addr(), alg, lease, 0), admin)
			})
		}
		// Every lease call 50 ms late (a slow or distant Redis): requests
		// that find tokens are not held up by the refreshes on their way,
		// nor, at the key's limit, those that find none.
		b.Run(fmt.Sprintf("%s/lease=%d/lease-calls+50ms", alg, leaseMax), func(b *testing.B) {
			runLeaseRow(b, leaseInstancesOf(b, srv.Addr(), alg, leaseMax, 50*time.Millisecond), admin)
		})
	}
}

// slowLeaser is a store whose lease calls take delay longer: the injected
// latency of BenchmarkRedisLease's slow rows.
type slowLeaser struct {
	core.Store
	leaser core.TokenLeaser
	delay  time.Duration
}

func (s slowLeaser) LeaseTokens(ctx context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	time.Sleep(s.delay)
	return s.leaser.LeaseTokens(ctx, req, want, ttl)
}

// leaseInstancesOf returns leaseInstances limiters of alg at 10,000/s, each
// on its own client, leasing up to lease tokens (0: none) in calls delay
// late.
func leaseInstancesOf(b *testing.B, addr string, alg core.Algorithm, lease int64, delay time.Duration) []*core.Limiter {
	ls := make([]*core.Limiter, leaseInstances)
	ns := fmt.Sprintf("lease-bench-%s-%d-%d-%d", alg, lease, delay, time.Now().UnixNano())
	for i := range ls {
		rdb := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: leaseGoroutines / leaseInstances, ContextTimeoutEnabled: true})
		b.Cleanup(func() { rdb.Close() })
		rs, err := redisstore.New(rdb)
		require.NoError(b, err)
		var st core.Store = rs
		if delay > 0 {
			st = slowLeaser{rs, rs, delay}
		}
		opts := []core.Option{core.WithNamespace(ns)}
		if lease > 0 {
			opts = append(opts, core.WithTokenLease(core.TokenLease{Max: lease, TTL: leaseTTL, Fleet: leaseInstances}))
		}
		ls[i], err = core.NewLimiter(st, alg, core.PerSecond(10_000), opts...)
		require.NoError(b, err)
		b.Cleanup(func() { _ = ls[i].ReturnLeasedTokens(context.Background()) })
	}
	return ls
}

// runLeaseRow runs b.N decisions of one key from leaseGoroutines goroutines
// spread over ls, after leaseWarmup of the same load (but for the first
// run, of one decision), and reports the row's figures: Redis's script
// calls are counted from the end of the warmup. Each goroutine records the
// latency of its decisions in a slice allocated before the timer starts,
// twice its share long, and takes no more decisions once it is full (the
// others take them), so that no slice grows in the timed loop.
func runLeaseRow(b *testing.B, ls []*core.Limiter, admin *goredis.Client) {
	ctx := context.Background()
	var next, admitted, failed atomic.Int64
	lats := make([][]time.Duration, leaseGoroutines)
	for g := range lats {
		lats[g] = make([]time.Duration, 0, 2*b.N/leaseGoroutines+64)
	}
	if b.N > 1 {
		warmLeaseRow(b, ls)
	}
	require.NoError(b, admin.ConfigResetStat(ctx).Err())
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for g := range leaseGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lim, mine := ls[g%len(ls)], lats[g]
			for len(mine) < cap(mine) && next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				d, err := lim.Allow(ctx, "hot")
				mine = append(mine, time.Since(t0))
				switch {
				case err != nil:
					failed.Add(1)
				case d.Allowed:
					admitted.Add(1)
				}
			}
			lats[g] = mine
		}()
	}
	wg.Wait()
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d decisions failed", n, b.N)
	}
	secs := b.Elapsed().Seconds()
	lat := slices.Concat(lats...)
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/secs, "decisions/s")
	b.ReportMetric(float64(admitted.Load())/secs, "admitted/s")
	b.ReportMetric(float64(scriptCalls(b, admin))/float64(b.N), "calls/decision")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(lat[len(lat)*999/1000].Nanoseconds()), "p999-ns")
}

// leaseWarmup is how long a row's load runs at least before it is
// measured: long enough for GCRA's burst (a second of the rate) to be spent
// and the leases to reach their size, so that the row is the hot key's
// steady state.
const leaseWarmup = time.Second

// warmLeaseRow runs the row's load (leaseGoroutines goroutines asking one
// key through ls) for leaseWarmup, and for a fixed window on until its
// next window starts, so that the row measures a window's start and what
// follows (not, by chance, only the denials after its quota is spent).
func warmLeaseRow(b *testing.B, ls []*core.Limiter) {
	end := time.Now().Add(leaseWarmup)
	if ls[0].Algorithm() == core.FixedWindow { // windows of a second, on Redis's clock
		end = end.Truncate(time.Second).Add(time.Second)
	}
	var wg sync.WaitGroup
	for g := range leaseGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if _, err := ls[g%len(ls)].Allow(context.Background(), "hot"); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// scriptCalls is the number of EVALSHA and EVAL calls Redis ran since its
// statistics were reset (INFO commandstats), less the failed ones (an
// EVALSHA refused with NOSCRIPT is sent again as EVAL).
func scriptCalls(b *testing.B, admin *goredis.Client) int64 {
	info, err := admin.Info(context.Background(), "commandstats").Result()
	require.NoError(b, err)
	var calls int64
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for kv := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k != "calls" && k != "failed_calls" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(b, err)
			if k == "failed_calls" { // a NOSCRIPT reply, which the EVAL after it counts again
				n = -n
			}
			calls += n
		}
	}
	return calls
}

// TestRedisLeaseScriptFlush: 8 instances x 8 goroutines lease one key of a
// fixed window of 1000 per hour while Redis's script cache is flushed
// again and again: no decision fails (a NOSCRIPT reply falls back to EVAL)
// and exactly 1000 are admitted.
func TestRedisLeaseScriptFlush(t *testing.T) {
	srv := redistest.Start(t)
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { admin.Close() })
	ls := make([]*core.Limiter, leaseInstances)
	for i := range ls {
		rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), PoolSize: 8, ContextTimeoutEnabled: true})
		t.Cleanup(func() { rdb.Close() })
		st, err := redisstore.New(rdb)
		require.NoError(t, err)
		ls[i], err = core.NewLimiter(st, core.FixedWindow, core.Every(1000, 24*time.Hour), core.WithNamespace(t.Name()),
			core.WithTokenLease(core.TokenLease{Max: 50, TTL: time.Second}))
		require.NoError(t, err)
	}
	stop := make(chan struct{})
	flushed := make(chan int)
	go flushScripts(admin, stop, flushed)
	var admitted, failed atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				d, err := ls[g%len(ls)].Allow(context.Background(), "hot")
				switch {
				case err != nil:
					failed.Add(1)
				case d.Allowed:
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	n := <-flushed
	for _, l := range ls { // what the instances still hold
		for {
			d, err := l.Allow(context.Background(), "hot")
			require.NoError(t, err)
			if !d.Allowed {
				break
			}
			admitted.Add(1)
		}
	}
	require.Zero(t, failed.Load(), "decisions failed")
	require.Equal(t, int64(1000), admitted.Load())
	require.Positive(t, n, "the script cache was flushed")
	t.Logf("%d flushes during the run", n)
}

// BenchmarkRedisLeaseColdKeys sends b.N requests of b.N distinct keys (one
// request each) through a leasing limiter: each costs exactly one Redis
// call, none leases, and no goroutine is left behind. The row is
// -benchtime=1000000x; -benchtime=2000x checks it quickly.
func BenchmarkRedisLeaseColdKeys(b *testing.B) {
	srv := redistest.Start(b)
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { admin.Close() })
	ls := leaseInstancesOf(b, srv.Addr(), core.GCRA, leaseMax, 0)
	lim := ls[0]
	require.NoError(b, admin.ConfigResetStat(context.Background()).Err())
	goroutines := runtime.NumGoroutine()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if _, err := lim.Allow(context.Background(), "cold-"+strconv.FormatInt(i, 10)); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	require.Zero(b, failed.Load(), "decisions failed")
	s := lim.TokenLeaseStats()
	require.Zero(b, s.Leased, "a cold key leases nothing")
	require.Equal(b, int64(b.N), s.Calls, "one store call per cold key")
	require.LessOrEqual(b, scriptCalls(b, admin), int64(b.N), "Redis calls <= decisions")
	require.LessOrEqual(b, runtime.NumGoroutine(), goroutines, "no goroutine left behind")
	b.ReportMetric(float64(scriptCalls(b, admin))/float64(b.N), "calls/decision")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// TestRedisLeaseStoreDown: with Redis stopped, an instance spends the
// tokens it holds (at most Max) and then reports the store's error; once
// Redis is back, its decisions succeed and it leases again.
func TestRedisLeaseStoreDown(t *testing.T) {
	srv := redistest.StartLocal(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	st, err := redisstore.New(rdb)
	require.NoError(t, err)
	lim, err := core.NewLimiter(st, core.FixedWindow, core.Every(100_000, 24*time.Hour), core.WithoutBreaker(),
		core.WithTokenLease(core.TokenLease{Max: 50, TTL: time.Minute}))
	require.NoError(t, err)
	ctx := context.Background()
	for range 200 {
		_, err := lim.Allow(ctx, "hot")
		require.NoError(t, err)
	}
	require.Positive(t, lim.TokenLeaseStats().Leased)
	srv.Stop(t)
	local := 0
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		d, err := lim.Allow(cctx, "hot")
		cancel()
		if err != nil {
			break
		}
		require.True(t, d.Allowed)
		local++
		require.LessOrEqual(t, local, 50, "at most Max spent while Redis is down")
	}
	t.Logf("%d decided from the lease while Redis was down", local)
	srv.Restart(t)
	leased := lim.TokenLeaseStats().Leased
	var ok int
	for range 200 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		d, err := lim.Allow(cctx, "hot")
		cancel()
		if err == nil && d.Allowed {
			ok++
		}
	}
	require.Greater(t, ok, 150, "decisions succeed once Redis is back")
	require.Greater(t, lim.TokenLeaseStats().Leased, leased, "leasing resumes")
}

// flushScripts flushes Redis's script cache again and again until stop is
// closed, then sends the number of flushes on flushed.
func flushScripts(admin *goredis.Client, stop <-chan struct{}, flushed chan<- int) {
	n := 0
	defer func() { flushed <- n }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if admin.ScriptFlush(context.Background()).Err() == nil {
			n++
		}
	}
}
