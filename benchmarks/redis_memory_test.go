package benchmarks

// What each Redis limiter costs Redis in memory per client key.
//
//	go test -run '^$' -bench RedisBytesPerKey ./benchmarks

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	redisrate "github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/throttled/throttled/v2"
	ulule "github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/ratewarden/ratewarden/core"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// redisMemoryRows are the limiters whose Redis memory is compared, each with
// its library's default key prefix, all at 100 requests an hour (so no key
// expires during a run), on go-redis (rueidis writes the same keys).
func redisMemoryRows() []redisImpl {
	rows := []redisImpl{
		{"redis_rate", func(_ testing.TB, c *redisClients) func() redisDecide {
			lim := redisrate.NewLimiter(c.rdb) // keys "rate:" + key
			return shared(func(ctx context.Context, key string) (bool, error) {
				res, err := lim.Allow(ctx, key, redisrate.PerHour(100))
				return err == nil && res.Allowed > 0, err
			})
		}},
		{"ulule", func(tb testing.TB, c *redisClients) func() redisDecide {
			st, err := ululeredis.NewStoreWithOptions(c.rdb, ulule.StoreOptions{Prefix: ulule.DefaultPrefix})
			require.NoError(tb, err)
			lim := ulule.New(st, ulule.Rate{Period: time.Hour, Limit: 100})
			return shared(func(ctx context.Context, key string) (bool, error) {
				res, err := lim.Get(ctx, key)
				return err == nil && !res.Reached, err
			})
		}},
		{"throttled", func(tb testing.TB, c *redisClients) func() redisDecide {
			// throttled has no default prefix; "throttled:" is its README's.
			lim := newThrottled(tb, c.rdb, throttled.RateQuota{MaxRate: throttled.PerHour(100), MaxBurst: 99})
			return shared(func(ctx context.Context, key string) (bool, error) {
				limited, _, err := lim.RateLimitCtx(ctx, key, 1)
				return err == nil && !limited, err
			})
		}},
	}
	for _, alg := range core.Algorithms() {
		rows = append(rows, redisImpl{"ratewarden-" + alg.String(), func(tb testing.TB, c *redisClients) func() redisDecide {
			st, err := redisstore.New(c.rdb)
			require.NoError(tb, err)
			return shared(ourLimiter(tb, st, alg, core.PerHour(100)))
		}})
	}
	return rows
}

// redisBytesPerKeyCounts are the client key counts of
// BenchmarkRedisBytesPerKey; under -short, one small count, only so that the
// benchmark cannot rot. used_memory includes the keyspace's hash table, which
// doubles at powers of two (and is two tables while Redis rehashes), so read
// the per-key figures at more than one count.
func redisBytesPerKeyCounts() []int {
	if testing.Short() {
		return []int{2_000}
	}
	return []int{100_000, 1_000_000}
}

// BenchmarkRedisBytesPerKey sends one request from each of n client keys
// through each limiter, into a Redis server emptied before each row, and
// reports the growth of Redis's used_memory per client key (the keyspace's
// tables included), the average MEMORY USAGE of 100 of the keys the limiter
// wrote (key name, value and overhead, SAMPLES 0), and the Redis keys written
// per client key. The server is always one this benchmark starts (it is
// flushed), never REDIS_URL's.
func BenchmarkRedisBytesPerKey(b *testing.B) {
	srv := redistest.StartLocal(b)
	c := newRedisClients(b, srv.Addr())
	ctx := context.Background()
	for _, im := range redisMemoryRows() {
		for _, n := range redisBytesPerKeyCounts() {
			b.Run(im.name+"/keys="+strconv.Itoa(n), func(b *testing.B) {
				for range b.N {
					require.NoError(b, c.rdb.FlushAll(ctx).Err())
					before := usedMemory(b, c.rdb)
					fillRedis(b, im.setup(b, c)(), n)
					after := usedMemory(b, c.rdb)
					keys, err := c.rdb.DBSize(ctx).Result()
					require.NoError(b, err)
					b.ReportMetric(float64(after-before)/float64(n), "used-B/key")
					b.ReportMetric(sampleMemoryUsage(b, c.rdb, 100), "usage-B/key")
					b.ReportMetric(float64(keys)/float64(n), "rediskeys/key")
				}
			})
		}
	}
}

// fillRedis decides one request for each of n client keys from 64
// goroutines, and fails if any was refused or failed.
func fillRedis(b *testing.B, decide redisDecide, n int) {
	ctx := context.Background()
	var next, refused atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				ok, err := decide(ctx, "user:"+strconv.FormatInt(i, 10))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				if !ok {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() > 0 {
		b.Fatalf("%d of %d first requests refused (first error: %v)", refused.Load(), n, firstErr.Load())
	}
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(b *testing.B, rdb *goredis.Client) int64 {
	info, err := rdb.Info(context.Background(), "memory").Result()
	require.NoError(b, err)
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	b.Fatal("INFO memory has no used_memory")
	return 0
}

// sampleMemoryUsage averages MEMORY USAGE over up to n random keys.
func sampleMemoryUsage(b *testing.B, rdb *goredis.Client, n int) float64 {
	ctx := context.Background()
	total, seen := int64(0), 0
	for range n {
		key, err := rdb.RandomKey(ctx).Result()
		require.NoError(b, err)
		usage, err := rdb.MemoryUsage(ctx, key, 0).Result()
		require.NoError(b, err)
		total += usage
		seen++
	}
	return float64(total) / float64(seen)
}
