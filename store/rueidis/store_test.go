package rueidisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// conformanceOpts: the suite moves a manual clock, so the store decides at the
// caller's time, and the floor on TTLs keeps Redis from expiring state on its
// own clock while the manual one stands still; the suite compares every
// field, and cached denials repeat their Remaining, so the cache is off
// (TestCacheMatchesRedis compares it with Redis).
func conformanceOpts() []luascript.Option {
	return []luascript.Option{luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour), luascript.WithLocalCache(0)}
}

func TestConformanceSingle(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	storetest.Run(t, func(t *testing.T) core.Store {
		return newStore(t, client, conformanceOpts()...)
	})
}

func TestConformanceCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starting a cluster takes seconds")
	}
	client := newClient(t, redistest.StartCluster(t)...)
	require.Len(t, client.Nodes(), 3)
	storetest.Run(t, func(t *testing.T) core.Store {
		return newStore(t, client, conformanceOpts()...)
	})
}

// TestExactness: 64 goroutines spread over 4 separate clients (4 application
// instances, each with its own connections) hammer one key with a limit of 100
// per 10 s, at one instant: exactly 100 are admitted, for every algorithm, on a
// single node and on a cluster, with the local cache on (the default).
func TestExactness(t *testing.T) {
	const instances, goroutines, perGoroutine, limit = 4, 64, 5, 100
	targets := []struct {
		name  string
		addrs func(t *testing.T) []string
	}{
		{"single", func(t *testing.T) []string { return []string{redistest.Start(t).Addr()} }},
		{"cluster", func(t *testing.T) []string {
			if testing.Short() {
				t.Skip("starting a cluster takes seconds")
			}
			return redistest.StartCluster(t)
		}},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			addrs := target.addrs(t)
			prefix := testPrefix()
			stores := make([]*luascript.Store, instances)
			for i := range stores {
				stores[i] = newStore(t, newClient(t, addrs...), luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour))
			}
			for _, alg := range core.Algorithms() {
				t.Run(alg.String(), func(t *testing.T) {
					req := core.TakeRequest{
						Key: "hot", Algorithm: alg, Cost: 1, Now: storetest.Start,
						Limits: []core.Limit{core.Every(limit, 10*time.Second)},
					}
					var admitted, denied atomic.Int64
					var wg sync.WaitGroup
					start := make(chan struct{})
					for g := range goroutines {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							for range perGoroutine {
								d, err := stores[g%instances].Take(context.Background(), req)
								if !assert.NoError(t, err) {
									return
								}
								if d.Allowed {
									admitted.Add(1)
								} else {
									denied.Add(1)
								}
							}
						}()
					}
					close(start)
					wg.Wait()
					t.Logf("%s on %s: %d admitted, %d denied", alg, target.name, admitted.Load(), denied.Load())
					assert.Equal(t, int64(limit), admitted.Load())
					assert.Equal(t, int64(goroutines*perGoroutine-limit), denied.Load())
				})
			}
		})
	}
}

// TestOneRoundTrip counts Redis commands per decision with INFO commandstats:
// one EVALSHA, nothing else, for every algorithm and for several limits.
func TestOneRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	for _, alg := range core.Algorithms() {
		for _, limits := range [][]core.Limit{
			{core.PerSecond(5)},
			{core.PerSecond(5), core.PerMinute(20)},
		} {
			t.Run(alg.String()+"/"+strconv.Itoa(len(limits)), func(t *testing.T) {
				st := newStore(t, client, luascript.WithLocalCache(0))
				req := core.TakeRequest{Key: "k", Algorithm: alg, Limits: limits, Cost: 1}
				_, err := st.Take(context.Background(), req) // loads the script
				require.NoError(t, err)
				const n = 20
				before := commandCalls(t, client)
				for range n {
					_, err := st.Take(context.Background(), req)
					require.NoError(t, err)
				}
				assert.Equal(t, map[string]int64{"evalsha": n}, roundTrips(diffCalls(before, commandCalls(t, client))))
			})
		}
	}
}

// TestServerClock decides on Redis's TIME (the default): a fresh key admits its
// burst, then denies with a RetryAfter of about one interval, and the key
// carries a TTL.
func TestServerClock(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	prefix := testPrefix()
	st := newStore(t, client, luascript.WithPrefix(prefix))
	req := core.TakeRequest{Key: "clock", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1}
	ctx := context.Background()
	for i := range 2 {
		d, err := st.Take(ctx, req)
		require.NoError(t, err)
		assert.True(t, d.Allowed, "request %d", i)
	}
	d, err := st.Take(ctx, req)
	require.NoError(t, err)
	assert.False(t, d.Allowed)
	assert.InDelta(t, float64(30*time.Second), float64(d.RetryAfter), float64(5*time.Second))
	keys, err := st.Keys(req)
	require.NoError(t, err)
	ttl, err := client.Do(ctx, client.B().Pttl().Key(keys[0]).Build()).AsInt64()
	require.NoError(t, err)
	assert.Greater(t, ttl, int64(0))
	assert.LessOrEqual(t, ttl, int64(time.Minute/time.Millisecond))
}

// TestScriptFlushed: after SCRIPT FLUSH the store gets NOSCRIPT, sends the
// script once with EVAL, and goes back to EVALSHA.
func TestScriptFlushed(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithCallerClock())
	req := core.TakeRequest{Key: "k", Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerSecond(3)}, Cost: 1, Now: storetest.Start}
	ctx := context.Background()
	_, err := st.Take(ctx, req)
	require.NoError(t, err)
	require.NoError(t, client.Do(ctx, client.B().ScriptFlush().Build()).Error())
	before := commandCalls(t, client)
	for i := range 2 {
		d, err := st.Take(ctx, req)
		require.NoError(t, err)
		assert.True(t, d.Allowed)
		assert.Equal(t, int64(1-i), d.Remaining)
	}
	after := roundTrips(diffCalls(before, commandCalls(t, client)))
	// The failed EVALSHA counts as a call on Redis 7.0 and is left out of
	// calls on later versions (it shows as rejected_calls there).
	assert.Equal(t, int64(1), after["eval"])
	assert.Contains(t, []int64{1, 2}, after["evalsha"])
	assert.Len(t, after, 2)
}

func TestNewErrors(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	tests := []struct {
		name   string
		client rueidis.Client
		opts   []luascript.Option
		want   error
	}{
		{"nil client", nil, nil, ErrClient},
		{"nil option", client, []luascript.Option{nil}, core.ErrInvalidOption},
		{"brace in prefix", client, []luascript.Option{luascript.WithPrefix("app{x}:")}, core.ErrInvalidOption},
		{"long prefix", client, []luascript.Option{luascript.WithPrefix(string(make([]byte, 257)))}, core.ErrInvalidOption},
		{"negative min TTL", client, []luascript.Option{luascript.WithMinTTL(-time.Second)}, core.ErrInvalidOption},
		{"negative cache size", client, []luascript.Option{luascript.WithLocalCache(-1)}, core.ErrInvalidOption},
		{"huge cache", client, []luascript.Option{luascript.WithLocalCache(1 << 30)}, core.ErrInvalidOption},
		{"huge min TTL", client, []luascript.Option{luascript.WithMinTTL(core.MaxPeriod + time.Hour)}, core.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := New(tt.client, tt.opts...)
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, st)
		})
	}
	_, err := New(client, luascript.WithPrefix(""), luascript.WithCallerClock(), luascript.WithMinTTL(time.Minute), luascript.WithLocalCache(0))
	require.NoError(t, err)
	// The local cache is on by default: a denied key is denied again without
	// a script call; with the cache off, every request is one.
	for _, tc := range []struct {
		name  string
		opts  []luascript.Option
		calls int64
	}{{"default", nil, 0}, {"cache off", []luascript.Option{luascript.WithLocalCache(0)}, 5}} {
		st := newStore(t, client, tc.opts...)
		req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}
		for range 2 {
			_, err := st.Take(context.Background(), req)
			require.NoError(t, err)
		}
		before := commandCalls(t, client)
		for range 5 {
			d, err := st.Take(context.Background(), req)
			require.NoError(t, err)
			require.False(t, d.Allowed)
		}
		assert.Equal(t, tc.calls, roundTrips(diffCalls(before, commandCalls(t, client)))["evalsha"], tc.name)
	}
}

// TestBadRequests: invalid requests fail with core's sentinels and never reach
// Redis.
func TestBadRequests(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithCallerClock())
	good := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: storetest.Start}
	tests := []struct {
		name string
		edit func(r *core.TakeRequest)
		want error
	}{
		{"no limits", func(r *core.TakeRequest) { r.Limits = nil }, core.ErrInvalidLimit},
		{"zero rate", func(r *core.TakeRequest) { r.Limits = []core.Limit{{Period: time.Second}} }, core.ErrInvalidLimit},
		{"bad algorithm", func(r *core.TakeRequest) { r.Algorithm = 42 }, core.ErrInvalidAlgorithm},
		{"refund before the epoch", func(r *core.TakeRequest) { r.Cost, r.Now = -1, time.Unix(-1, 0) }, core.ErrClock},
		{"time before the epoch", func(r *core.TakeRequest) { r.Now = time.Unix(-1, 0) }, core.ErrClock},
	}
	before := commandCalls(t, client)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := good
			tt.edit(&req)
			_, err := st.Take(context.Background(), req)
			require.ErrorIs(t, err, tt.want)
			assert.False(t, errors.Is(err, luascript.ErrRedis))
		})
	}
	assert.Empty(t, diffCalls(before, commandCalls(t, client)))
}

// TestBindingChecks runs the checks every Redis binding shares (see package
// redistest) on one single-node server.
func TestBindingChecks(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	stores := func(t testing.TB, opts ...luascript.Option) core.Store { return newStore(t, client, opts...) }
	scriptCalls := func(t testing.TB) int64 {
		c := commandCalls(t, client)
		return c["evalsha"] + c["eval"]
	}
	t.Run("CacheMatchesRedis", func(t *testing.T) { redistest.CacheMatchesRedis(t, stores) })
	t.Run("CacheFlood", func(t *testing.T) { redistest.CacheFlood(t, stores, scriptCalls) })
	t.Run("Reset", func(t *testing.T) { redistest.Reset(t, stores, scriptCalls) })
	t.Run("RefundOnServerTime", func(t *testing.T) { redistest.RefundOnServerTime(t, stores, scriptCalls) })
	t.Run("Backend", func(t *testing.T) { redistest.Backend(t, backend{client}) })
	t.Run("IntegerReplies", func(t *testing.T) { redistest.IntegerReplies(t, backend{client}) })
}
