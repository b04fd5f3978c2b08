package benchmarks

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	httprateredis "github.com/go-chi/httprate-redis"
	redisrate "github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/throttled/throttled/v2"
	throttledredis "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/ratewarden/ratewarden/core"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	rueidisstore "github.com/ratewarden/ratewarden/store/rueidis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The Redis benchmarks decide requests for redisKeys keys at redisRate per
// second each: far more than any key receives here, so nearly every decision
// is an admission, as on a healthy API.
const (
	redisKeys = 10_000
	redisRate = 1_000
)

// redisGoroutines are the concurrency levels of BenchmarkRedis.
var redisGoroutines = []int{1, 16, 64}

// incrScript is the floor every Redis limiter is measured against: one
// EVALSHA that counts and sets a TTL, the least a shared counter can do.
const incrScript = `local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n`

// redisDecide decides one request for key: admitted or not.
type redisDecide func(ctx context.Context, key string) (bool, error)

// redisClients are the clients one benchmark run shares between every row,
// so each row gets the same connections to the same server.
type redisClients struct {
	addr string
	rdb  *goredis.Client
	rue  rueidis.Client
}

// redisImpl is one row of the table. setup runs once per row; its result is
// called once per goroutine, for limiters (httprate) that need per-goroutine
// state.
type redisImpl struct {
	name  string
	setup func(tb testing.TB, c *redisClients) func() redisDecide
}

// shared turns a decide function safe for concurrent use into a setup result.
func shared(d redisDecide) func() redisDecide { return func() redisDecide { return d } }

var redisPeers = []redisImpl{
	{"floor-goredis-evalsha", func(_ testing.TB, c *redisClients) func() redisDecide {
		script := goredis.NewScript(incrScript)
		return shared(func(ctx context.Context, key string) (bool, error) {
			n, err := script.Run(ctx, c.rdb, []string{key}, 1000).Int64()
			return n <= redisRate, err
		})
	}},
	{"floor-rueidis-evalsha", func(_ testing.TB, c *redisClients) func() redisDecide {
		script := rueidis.NewLuaScript(incrScript)
		return shared(func(ctx context.Context, key string) (bool, error) {
			n, err := script.Exec(ctx, c.rue, []string{key}, []string{"1000"}).AsInt64()
			return n <= redisRate, err
		})
	}},
	{"ulule", func(tb testing.TB, c *redisClients) func() redisDecide {
		lim := newUlule(tb, c.rdb, ulule.Rate{Period: time.Second, Limit: redisRate})
		return shared(func(ctx context.Context, key string) (bool, error) {
			res, err := lim.Get(ctx, key)
			return !res.Reached, err
		})
	}},
	{"redis_rate", func(_ testing.TB, c *redisClients) func() redisDecide {
		lim := redisrate.NewLimiter(c.rdb)
		return shared(func(ctx context.Context, key string) (bool, error) {
			res, err := lim.Allow(ctx, key, redisrate.PerSecond(redisRate))
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		})
	}},
	{"throttled", func(tb testing.TB, c *redisClients) func() redisDecide {
		lim := newThrottled(tb, c.rdb, throttled.RateQuota{MaxRate: throttled.PerSec(redisRate), MaxBurst: redisRate - 1})
		return shared(func(ctx context.Context, key string) (bool, error) {
			limited, _, err := lim.RateLimitCtx(ctx, key, 1)
			return !limited, err
		})
	}},
	{"httprate-redis", func(tb testing.TB, c *redisClients) func() redisDecide {
		lim := newHTTPRate(tb, c.addr, redisRate, time.Second)
		return func() redisDecide {
			return httpRateDecide(lim)
		}
	}},
}

func newUlule(tb testing.TB, rdb *goredis.Client, rate ulule.Rate) *ulule.Limiter {
	st, err := ululeredis.NewStoreWithOptions(rdb, ulule.StoreOptions{Prefix: "ulule", MaxRetry: 3})
	require.NoError(tb, err)
	return ulule.New(st, rate)
}

func newThrottled(tb testing.TB, rdb *goredis.Client, quota throttled.RateQuota) *throttled.GCRARateLimiterCtx {
	st, err := throttledredis.NewCtx(rdb, "throttled:")
	require.NoError(tb, err)
	lim, err := throttled.NewGCRARateLimiterCtx(st, quota)
	require.NoError(tb, err)
	return lim
}

// newHTTPRate builds httprate's limiter on its Redis counter. The counter
// makes its own client (v0.5.0 ignores Config.Client), with go-redis's
// default pool size.
func newHTTPRate(tb testing.TB, addr string, limit int, window time.Duration) *httprate.RateLimiter {
	host, port, err := net.SplitHostPort(addr)
	require.NoError(tb, err)
	p, err := strconv.ParseUint(port, 10, 16)
	require.NoError(tb, err)
	counter, err := httprateredis.NewRedisLimitCounter(&httprateredis.Config{
		Host: host, Port: uint16(p), MaxActive: 10 * runtime.GOMAXPROCS(0),
		PrefixKey: "httprate", WindowLength: window, FallbackDisabled: true,
	})
	require.NoError(tb, err)
	return httprate.NewRateLimiter(limit, window, httprate.WithLimitCounter(counter))
}

// httpRateDecide asks httprate's limiter through its own entry point, which
// needs a request and a response writer; each goroutine gets its own.
func httpRateDecide(lim *httprate.RateLimiter) redisDecide {
	w := headerSink{}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	return func(ctx context.Context, key string) (bool, error) {
		return !lim.OnLimit(w, r.WithContext(ctx), key), nil
	}
}

// headerSink is a ResponseWriter that keeps only headers.
type headerSink http.Header

func (h headerSink) Header() http.Header       { return http.Header(h) }
func (headerSink) Write(p []byte) (int, error) { return len(p), nil }
func (headerSink) WriteHeader(int)             {}

// ourLimiter wraps a ratewarden store in a limiter and a decide function.
func ourLimiter(tb testing.TB, st core.Store, alg core.Algorithm, limit core.Limit) redisDecide {
	lim, err := core.NewLimiter(st, alg, limit)
	require.NoError(tb, err)
	return func(ctx context.Context, key string) (bool, error) {
		d, err := lim.Allow(ctx, key)
		return d.Allowed, err
	}
}

// redisImpls is every row of the table: the floors, the peers, and ours.
func redisImpls() []redisImpl {
	return append(append([]redisImpl(nil), redisPeers...), ourRedisImpls()...)
}

// BenchmarkRedis measures decisions per second against one local
// redis-server, every implementation in the same run, at 1, 16 and 64
// goroutines over redisKeys keys.
func BenchmarkRedis(b *testing.B) {
	srv := redistest.Start(b)
	c := newRedisClients(b, srv.Addr())
	for _, im := range redisImpls() {
		keys := make([]string, redisKeys)
		for i := range keys {
			keys[i] = "bench:" + im.name + ":" + strconv.Itoa(i)
		}
		perGoroutine := im.setup(b, c)
		for _, g := range redisGoroutines {
			b.Run(im.name+"/g="+strconv.Itoa(g), func(b *testing.B) {
				runRedis(b, g, keys, perGoroutine)
			})
		}
	}
}

func newRedisClients(tb testing.TB, addr string) *redisClients {
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	tb.Cleanup(func() { rdb.Close() })
	rue, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	require.NoError(tb, err)
	tb.Cleanup(rue.Close)
	return &redisClients{addr: addr, rdb: rdb, rue: rue}
}

// runRedis runs b.N decisions over keys from g goroutines and reports
// decisions/s. Any error fails the benchmark: a row that errs is not measured.
func runRedis(b *testing.B, g int, keys []string, perGoroutine func() redisDecide) {
	ctx := context.Background()
	var errs atomic.Int64
	var firstErr atomic.Value
	var seq atomic.Int64
	loop := func(next func() bool) {
		decide := perGoroutine()
		i := int(seq.Add(1)) * 7919
		for next() {
			if _, err := decide(ctx, keys[i%len(keys)]); err != nil && errs.Add(1) == 1 {
				firstErr.Store(err)
			}
			i++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if g == 1 {
		n := 0
		loop(func() bool { n++; return n <= b.N })
	} else {
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((g + procs - 1) / procs)
		b.RunParallel(func(pb *testing.PB) { loop(pb.Next) })
	}
	b.StopTimer()
	if n := errs.Load(); n > 0 {
		b.Fatalf("%d of %d decisions failed, the first with: %v", n, b.N, firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// exactLimit is the limit of the exactness test: 100 per hour, so no quota
// comes back while it runs.
const exactLimit = 100

// exactImpl sets up one "app instance": its own client and limiter.
type exactImpl struct {
	name string
	// exact says the implementation must admit exactly exactLimit.
	exact bool
	setup func(t *testing.T, addr string) redisDecide
}

// ownGoRedis returns a go-redis client of its own for one app instance.
func ownGoRedis(t *testing.T, addr string) *goredis.Client {
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 2})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

var exactPeers = []exactImpl{
	{"ulule", false, func(t *testing.T, addr string) redisDecide {
		lim := newUlule(t, ownGoRedis(t, addr), ulule.Rate{Period: time.Hour, Limit: exactLimit})
		return func(ctx context.Context, key string) (bool, error) {
			res, err := lim.Get(ctx, key)
			return !res.Reached, err
		}
	}},
	{"redis_rate", false, func(t *testing.T, addr string) redisDecide {
		lim := redisrate.NewLimiter(ownGoRedis(t, addr))
		limit := redisrate.Limit{Rate: exactLimit, Burst: exactLimit, Period: time.Hour}
		return func(ctx context.Context, key string) (bool, error) {
			res, err := lim.Allow(ctx, key, limit)
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		}
	}},
	{"throttled", false, func(t *testing.T, addr string) redisDecide {
		lim := newThrottled(t, ownGoRedis(t, addr), throttled.RateQuota{MaxRate: throttled.PerHour(exactLimit), MaxBurst: exactLimit - 1})
		return func(ctx context.Context, key string) (bool, error) {
			limited, _, err := lim.RateLimitCtx(ctx, key, 1)
			return !limited, err
		}
	}},
	{"httprate-redis", false, func(t *testing.T, addr string) redisDecide {
		return httpRateDecide(newHTTPRate(t, addr, exactLimit, time.Hour))
	}},
}

// TestRedisExactness runs 64 app instances, each with its own client and
// limiter, against one key with a limit of 100, 10 requests each, and counts
// the admissions. Ours must admit exactly 100; the peers' counts are logged
// (go test -v -run RedisExactness ./benchmarks/).
func TestRedisExactness(t *testing.T) {
	const instances, perInstance = 64, 10
	srv := redistest.Start(t)
	for _, im := range append(append([]exactImpl(nil), exactPeers...), ourExactImpls()...) {
		t.Run(im.name, func(t *testing.T) {
			key := "exact:" + im.name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
			decides := make([]redisDecide, instances)
			for i := range decides {
				decides[i] = im.setup(t, srv.Addr())
			}
			var admitted, failed atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, decide := range decides {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for range perInstance {
						ok, err := decide(context.Background(), key)
						switch {
						case err != nil:
							failed.Add(1)
						case ok:
							admitted.Add(1)
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			t.Logf("%s: %d admitted of %d requests (limit %d), %d errors", im.name, admitted.Load(), instances*perInstance, exactLimit, failed.Load())
			if im.exact {
				require.Equal(t, int64(0), failed.Load())
				require.Equal(t, int64(exactLimit), admitted.Load())
			}
		})
	}
}

// ourAlgorithms are the algorithms of ratewarden's rows: GCRA, and the
// sliding window for the window algorithms.
var ourAlgorithms = []core.Algorithm{core.GCRA, core.SlidingWindow}

// ourRedisImpls are ratewarden's rows, on both clients, on Redis's clock (the
// default).
func ourRedisImpls() []redisImpl {
	var out []redisImpl
	for _, alg := range ourAlgorithms {
		out = append(out,
			redisImpl{"ratewarden-goredis-" + alg.String(), func(tb testing.TB, c *redisClients) func() redisDecide {
				st, err := redisstore.New(c.rdb)
				require.NoError(tb, err)
				return shared(ourLimiter(tb, st, alg, core.PerSecond(redisRate)))
			}},
			redisImpl{"ratewarden-rueidis-" + alg.String(), func(tb testing.TB, c *redisClients) func() redisDecide {
				st, err := rueidisstore.New(c.rue)
				require.NoError(tb, err)
				return shared(ourLimiter(tb, st, alg, core.PerSecond(redisRate)))
			}},
		)
	}
	return out
}

// ourExactImpls are ratewarden's app instances for TestRedisExactness, every
// algorithm on both clients.
func ourExactImpls() []exactImpl {
	limit := core.Every(exactLimit, 24*time.Hour) // a day: no window boundary inside the run
	var out []exactImpl
	for _, alg := range core.Algorithms() {
		out = append(out,
			exactImpl{"ratewarden-goredis-" + alg.String(), true, func(t *testing.T, addr string) redisDecide {
				rdb := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 2, ContextTimeoutEnabled: true})
				t.Cleanup(func() { rdb.Close() })
				st, err := redisstore.New(rdb)
				require.NoError(t, err)
				return ourLimiter(t, st, alg, limit)
			}},
			exactImpl{"ratewarden-rueidis-" + alg.String(), true, func(t *testing.T, addr string) redisDecide {
				rue, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
				require.NoError(t, err)
				t.Cleanup(rue.Close)
				st, err := rueidisstore.New(rue)
				require.NoError(t, err)
				return ourLimiter(t, st, alg, limit)
			}},
		)
	}
	return out
}
