package benchmarks

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// blackhole is a Redis that accepts connections and never answers: a
// server hung, or a network that drops replies. It reads and discards what
// it is sent, so a client's writes never block, and counts the connections.
type blackhole struct {
	ln    net.Listener
	conns atomic.Int64
	mu    sync.Mutex
	open  []net.Conn
}

func newBlackhole(t testing.TB) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &blackhole{ln: ln}
	go b.serve()
	t.Cleanup(b.close)
	return b
}

func (b *blackhole) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.conns.Add(1)
		b.mu.Lock()
		b.open = append(b.open, c)
		b.mu.Unlock()
		go func() { _, _ = io.Copy(io.Discard, c) }()
	}
}

func (b *blackhole) close() {
	_ = b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.open {
		_ = c.Close()
	}
}

// blackholedStore is a ratewarden Redis store whose server never answers,
// behind a wrapper that counts its calls.
func blackholedStore(t testing.TB) *countedStore {
	t.Helper()
	b := newBlackhole(t)
	client := redis.NewClient(&redis.Options{Addr: b.ln.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	st, err := redisstore.New(client)
	require.NoError(t, err)
	return &countedStore{next: st}
}

// countedStore counts the calls that reach the store it wraps.
type countedStore struct {
	next  core.Store
	calls atomic.Int64
}

func (s *countedStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	s.calls.Add(1)
	return s.next.Take(ctx, req)
}

// BenchmarkBlackholedRedis is a request through stdhttp's middleware,
// failing open, while Redis accepts connections and never answers, once the
// limiter's circuit breaker (on by default) has opened: the first five
// requests, before the loop, each wait for the store timeout (100 ms); the
// loop's requests are answered without asking Redis. It reports the 99th
// percentile of a request's time (p99-ns: the target is under 1 ms) and how
// many of the loop's requests reached Redis (store-calls: a probe, at most
// one per open interval of 0.8 to 1 s, then 1.6 to 2 s, up to 10 s).
func BenchmarkBlackholedRedis(b *testing.B) {
	st := blackholedStore(b)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(100))
	require.NoError(b, err)
	mw, err := stdhttp.New(lim, httplimit.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(b, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	for lim.BreakerState() == core.BreakerClosed {
		start := time.Now()
		h.ServeHTTP(rec, req)
		require.Equal(b, http.StatusOK, rec.Code, "fail open")
		require.GreaterOrEqual(b, time.Since(start), httplimit.DefaultStoreTimeout/2, "a store call that waited for the timeout")
	}
	before := st.calls.Load()
	times := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		h.ServeHTTP(rec, req)
		times = append(times, time.Since(start))
	}
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d, want 200 (fail open)", rec.Code)
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*99/100]), "p99-ns")
	b.ReportMetric(float64(st.calls.Load()-before), "store-calls")
}

// TestBlackholedRedisIsNotAskedWhileTheBreakerIsOpen: against a Redis that
// never answers, five requests wait for the store timeout and open the
// breaker; then no request reaches Redis for the open interval (on the
// limiter's manual clock), each answered fail-open at once; when it ends,
// one probe does, waits for the timeout, and the interval doubles.
func TestBlackholedRedisIsNotAskedWhileTheBreakerIsOpen(t *testing.T) {
	st := blackholedStore(t)
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := core.DefaultBreaker()
	cfg.Rand = func() float64 { return 0 } // no jitter: intervals of exactly 1 s, 2 s
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(100), core.WithClock(clk), core.WithBreaker(cfg))
	require.NoError(t, err)
	mw, err := stdhttp.New(lim, httplimit.WithLogger(slog.New(slog.DiscardHandler)),
		httplimit.WithStoreTimeout(20*time.Millisecond))
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func() int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for range 5 {
		require.Equal(t, http.StatusOK, send())
	}
	require.Equal(t, core.BreakerOpen, lim.BreakerState())
	require.Equal(t, int64(5), st.calls.Load())
	for range 200 {
		require.Equal(t, http.StatusOK, send())
		clk.Advance(4 * time.Millisecond) // 200 requests over 800 ms
	}
	clk.Advance(199 * time.Millisecond)
	require.Equal(t, http.StatusOK, send())
	assert.Equal(t, int64(5), st.calls.Load(), "Redis not asked for the open interval")
	clk.Advance(time.Millisecond)
	require.Equal(t, http.StatusOK, send())
	assert.Equal(t, int64(6), st.calls.Load(), "one probe when the interval ends")
	for range 100 {
		require.Equal(t, http.StatusOK, send())
	}
	clk.Advance(2*time.Second - time.Millisecond)
	require.Equal(t, http.StatusOK, send())
	assert.Equal(t, int64(6), st.calls.Load(), "the failed probe doubled the interval")
}
