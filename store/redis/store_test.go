package redisstore

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

var bg = context.Background()

func TestNewRejects(t *testing.T) {
	good := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer good.Close()
	tests := []struct {
		name   string
		client redis.UniversalClient
		opts   []luascript.Option
		want   error
	}{
		{"nil client", nil, nil, ErrClient},
		{"client ignoring deadlines", redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), nil, ErrClient},
		{"cluster client ignoring deadlines", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), nil, ErrClient},
		{"ring ignoring deadlines", redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}), nil, ErrClient},
		{"nil option", good, []luascript.Option{nil}, core.ErrInvalidOption},
		{"brace in prefix", good, []luascript.Option{luascript.WithPrefix("a{b}")}, core.ErrInvalidOption},
		{"negative min TTL", good, []luascript.Option{luascript.WithMinTTL(-time.Second)}, core.ErrInvalidOption},
		{"negative cache size", good, []luascript.Option{luascript.WithLocalCache(-1)}, core.ErrInvalidOption},
		{"huge cache", good, []luascript.Option{luascript.WithLocalCache(1 << 30)}, core.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *luascript.Store
			var err error
			require.NotPanics(t, func() { s, err = New(tt.client, tt.opts...) })
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, s)
			assert.True(t, strings.HasPrefix(err.Error(), "redisstore: "), err.Error())
		})
	}
	s, err := New(good, luascript.WithLocalCache(0), luascript.WithPrefix(""), luascript.WithCallerClock(), luascript.WithMinTTL(time.Second))
	require.NoError(t, err)
	assert.NotNil(t, s, "every option is luascript's, tested there (the cache that is off included)")
}

// TestSingle runs the checks that share one single-node server.
func TestSingle(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	t.Run("OneRoundTrip", func(t *testing.T) { testOneRoundTrip(t, client, srv.Addr()) })
	t.Run("Exactness", func(t *testing.T) {
		testExactness(t, func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr()) })
	})
	t.Run("ServerTime", func(t *testing.T) { testServerTime(t, client) })
	t.Run("TTLAndKeys", func(t *testing.T) { testTTLAndKeys(t, client) })
	stores := func(t testing.TB, opts ...luascript.Option) core.Store { return newStore(t, client, opts...) }
	scriptCalls := func(t testing.TB) int64 {
		c := commandCalls(t, srv.Addr())
		return c["evalsha"] + c["eval"]
	}
	t.Run("CacheMatchesRedis", func(t *testing.T) { redistest.CacheMatchesRedis(t, stores) })
	t.Run("CacheFlood", func(t *testing.T) { redistest.CacheFlood(t, stores, scriptCalls) })
	t.Run("Reset", func(t *testing.T) { redistest.Reset(t, stores, scriptCalls) })
	t.Run("RefundOnServerTime", func(t *testing.T) { redistest.RefundOnServerTime(t, stores, scriptCalls) })
	t.Run("LostReplyNotReplayed", func(t *testing.T) { testLostReply(t, srv.Addr()) })
	t.Run("Backend", func(t *testing.T) { redistest.Backend(t, backend{client}) })
	t.Run("IntegerReplies", func(t *testing.T) { redistest.IntegerReplies(t, backend{client}) })
}

// TestCluster runs the checks that share one 3-master cluster.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starting a cluster takes seconds")
	}
	addrs := redistest.StartCluster(t)
	client := newClusterClient(t, addrs)
	t.Run("OneRoundTrip", func(t *testing.T) { testOneRoundTrip(t, client, addrs...) })
	t.Run("Exactness", func(t *testing.T) {
		testExactness(t, func(t *testing.T) redis.UniversalClient { return newClusterClient(t, addrs) })
	})
	t.Run("ServerTime", func(t *testing.T) { testServerTime(t, client) })
	t.Run("NoCrossSlot", func(t *testing.T) { testNoCrossSlot(t, client) })
	t.Run("Backend", func(t *testing.T) { redistest.Backend(t, backend{client}) })
	t.Run("IntegerReplies", func(t *testing.T) { redistest.IntegerReplies(t, backend{client}) })
}

// testOneRoundTrip counts the commands Redis runs per decision: one EVALSHA
// (the scripts' inner commands are not counted as client commands, but INFO
// commandstats lists them too, so only the client's are compared).
func testOneRoundTrip(t *testing.T, client redis.UniversalClient, addrs ...string) {
	hook := &countHook{}
	client.AddHook(hook)
	for _, alg := range core.Algorithms() {
		for _, limits := range [][]core.Limit{{core.PerMinute(1000)}, {core.PerMinute(1000), core.PerHour(5000)}} {
			t.Run(fmt.Sprintf("%s/%d", alg, len(limits)), func(t *testing.T) {
				st := newStore(t, client, luascript.WithLocalCache(0))
				req := core.TakeRequest{Key: "rt", Algorithm: alg, Limits: limits, Cost: 1}
				_, err := st.Take(bg, req) // may load the script with EVAL
				require.NoError(t, err)
				before := commandCalls(t, addrs...)
				hook.reset()
				const n = 25
				for i := range n {
					req.Cost = int64(i % 3)
					d, err := st.Take(bg, req)
					require.NoError(t, err)
					require.True(t, d.Allowed)
				}
				assert.Equal(t, map[string]int{"evalsha": n}, hook.counts(), "commands the client sent")
				calls := diffCalls(before, commandCalls(t, addrs...))
				assert.Equal(t, int64(n), calls["evalsha"], "%v", calls)
				for name, c := range calls {
					if name != "evalsha" && !isScriptInner(name) {
						assert.Failf(t, "a command besides EVALSHA", "%s: %d", name, c)
					}
				}
			})
		}
	}
}

// countHook counts the commands a client sends, by name.
type countHook struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *countHook) reset() {
	h.mu.Lock()
	h.n = map[string]int{}
	h.mu.Unlock()
}

func (h *countHook) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.n)
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		if h.n != nil {
			h.n[cmd.Name()]++
		}
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		if h.n != nil {
			h.n["pipeline"]++
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// isScriptInner reports the commands the scripts run inside Redis, which INFO
// commandstats counts as well.
func isScriptInner(name string) bool {
	switch name {
	case "get", "set", "time", "llen", "lindex", "ltrim", "rpush", "pexpire", "del":
		return true
	}
	return false
}

// testExactness: 4 clients (4 application instances, 4 connection pools),
// 16 goroutines each, hammer one key with a limit of 100 per 10 s: exactly 100
// are admitted, for every algorithm. Time stands still (caller clock), so no
// quota refills during the run; the local cache is on, as by default.
func testExactness(t *testing.T, dial func(t *testing.T) redis.UniversalClient) {
	for _, cache := range []int{0, luascript.DefaultLocalCacheSize} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) { testExactnessWith(t, dial, cache) })
	}
}

func testExactnessWith(t *testing.T, dial func(t *testing.T) redis.UniversalClient, cache int) {
	prefix := testPrefix()
	stores := make([]*luascript.Store, 4)
	for i := range stores {
		s, err := New(dial(t), luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour), luascript.WithLocalCache(cache))
		require.NoError(t, err)
		stores[i] = s
	}
	now := time.Now()
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			req := core.TakeRequest{Key: "hot", Algorithm: alg, Limits: []core.Limit{core.Every(100, 10*time.Second)}, Cost: 1, Now: now}
			var admitted, denied, failed atomic.Int64
			var wg sync.WaitGroup
			for g := range 64 {
				wg.Add(1)
				go func(st *luascript.Store) {
					defer wg.Done()
					for range 10 {
						d, err := st.Take(bg, req)
						switch {
						case err != nil:
							failed.Add(1)
						case d.Allowed:
							admitted.Add(1)
						default:
							denied.Add(1)
						}
					}
				}(stores[g%4])
			}
			wg.Wait()
			t.Logf("%s, cache %d: admitted %d, denied %d of 640", alg, cache, admitted.Load(), denied.Load())
			assert.Equal(t, int64(0), failed.Load())
			assert.Equal(t, int64(100), admitted.Load())
			assert.Equal(t, int64(540), denied.Load())
		})
	}
}

// testServerTime: without the caller clock the scripts read Redis's TIME; the
// request's Now is ignored (here: zero), and the decisions are those of a
// fresh key at the server's time.
func testServerTime(t *testing.T, client redis.UniversalClient) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, client)
			req := core.TakeRequest{Key: "srv", Algorithm: alg, Limits: []core.Limit{core.PerMinute(3)}, Cost: 1}
			for i := range 3 {
				d, err := st.Take(bg, req)
				require.NoError(t, err)
				require.True(t, d.Allowed, "request %d", i)
				assert.Equal(t, int64(2-i), d.Remaining)
				assert.Positive(t, d.ResetAfter)
				assert.LessOrEqual(t, d.ResetAfter, 2*time.Minute)
			}
			d, err := st.Take(bg, req)
			require.NoError(t, err)
			require.False(t, d.Allowed)
			assert.Positive(t, d.RetryAfter)
			// The sliding window may wait for the next window and its decay.
			assert.LessOrEqual(t, d.RetryAfter, 2*time.Minute)
			if alg != core.SlidingWindow {
				assert.LessOrEqual(t, d.RetryAfter, time.Minute)
			}
		})
	}
}

// testTTLAndKeys: every key written carries the prefix, the hash tag and a
// TTL no longer than its state needs.
func testTTLAndKeys(t *testing.T, client *redis.Client) {
	limits := []core.Limit{core.Every(5, 10*time.Second), core.Every(50, time.Minute)}
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			prefix := testPrefix()
			st, err := New(client, luascript.WithPrefix(prefix))
			require.NoError(t, err)
			for _, key := range []string{"plain", "with{braces}", strings.Repeat("long", 100)} {
				for _, ls := range [][]core.Limit{limits[:1], limits} {
					d, err := st.Take(bg, core.TakeRequest{Key: key, Namespace: "ttl", Algorithm: alg, Limits: ls, Cost: 2})
					require.NoError(t, err)
					require.True(t, d.Allowed)
				}
			}
			keys, err := client.Keys(bg, prefix+"*").Result()
			require.NoError(t, err)
			assert.Len(t, keys, 9, "3 keys x (1 + 2 limits)")
			oneLimit := 0
			for _, k := range keys {
				open, end := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
				assert.Equal(t, len(prefix), open, k)
				assert.Greater(t, end, open+1, k)
				assert.NotContains(t, k[end+1:], "{", k)
				assert.LessOrEqual(t, len(k), 300, "long keys are hashed")
				ttl, err := client.PTTL(bg, k).Result()
				require.NoError(t, err)
				assert.Positive(t, ttl, k)
				// The longest state here: a sliding window of a minute lives two periods.
				assert.LessOrEqual(t, ttl, 2*time.Minute, k)
				if !strings.HasSuffix(k, ":0") && !strings.HasSuffix(k, ":1") {
					oneLimit++
					// One limit of 5 per 10 s: no state outlives 2 periods, and the
					// meters need only 2 intervals (4 s) after spending 2.
					bound := 20 * time.Second
					if alg.OneWord() {
						bound = 4 * time.Second
					} else if alg != core.SlidingWindow {
						bound = 10 * time.Second
					}
					assert.LessOrEqual(t, ttl, bound, k)
				}
			}
			assert.Equal(t, 3, oneLimit, "the keys of one limit of 5/10s")
		})
	}
}

// testNoCrossSlot: several limits on one request touch several keys; they
// share a hash tag, so a cluster never answers CROSSSLOT, whatever the key.
func testNoCrossSlot(t *testing.T, client *redis.ClusterClient) {
	st := newStore(t, client, luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour))
	limits := []core.Limit{core.PerSecond(5), core.PerMinute(50), core.PerHour(500)}
	slots := map[int64]bool{}
	for _, alg := range core.Algorithms() {
		for i := range 30 {
			key := fmt.Sprintf("user-%d{%d}:%d", i, i*31, i)
			req := core.TakeRequest{Key: key, Namespace: "xs", Algorithm: alg, Limits: limits, Cost: 1, Now: storetest.Start}
			d, err := st.Take(bg, req)
			require.NoError(t, err, "%s %s", alg, key)
			require.True(t, d.Allowed)
			keys, err := st.Keys(req)
			require.NoError(t, err)
			slot, err := client.ClusterKeySlot(bg, keys[0]).Result()
			require.NoError(t, err)
			slots[slot] = true
			for _, k := range keys[1:] {
				other, err := client.ClusterKeySlot(bg, k).Result()
				require.NoError(t, err)
				require.Equal(t, slot, other, k)
			}
		}
	}
	assert.Greater(t, len(slots), 10, "keys spread over the cluster")
}

// TestSentinel runs the store through a Sentinel failover client: the store
// takes any redis.UniversalClient.
func TestSentinel(t *testing.T) {
	_, sentinel := redistest.StartSentinel(t)
	client := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: redistest.SentinelMaster, SentinelAddrs: []string{sentinel}, ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = client.Close() })
	for _, alg := range core.Algorithms() {
		st := newStore(t, client)
		req := core.TakeRequest{Key: "sentinel", Algorithm: alg, Limits: []core.Limit{core.PerHour(10)}, Cost: 1}
		var admitted int
		for range 25 {
			d, err := st.Take(bg, req)
			require.NoError(t, err, alg.String())
			if d.Allowed {
				admitted++
			}
		}
		assert.Equal(t, 10, admitted, alg.String())
	}
}
