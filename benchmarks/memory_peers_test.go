package benchmarks

// The peers of the in-process rows, each built under a quota in its own
// library's terms and called through that library's own decision path. No
// row here is an approximation of its library.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	echomiddleware "github.com/labstack/echo/v4/middleware"
	sethmemory "github.com/sethvargo/go-limiter/memorystore"
	"github.com/stretchr/testify/require"
	"github.com/throttled/throttled/v2"
	throttledmem "github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"
)

var peers = []impl{
	{name: "x-time-rate", make: newXTimeRateMap},
	{name: "sethvargo", make: newSethvargoMem},
	{name: "ulule", make: newUluleMem},
	{name: "throttled", make: newThrottledMem},
	{name: "httprate", make: newHTTPRateLocal},
	{name: "echo-memorystore", make: newEchoMemoryStore},
}

// newXTimeRateMap is the usual hand-made store around golang.org/x/time/rate: a
// map of limiters under one mutex.
func newXTimeRateMap(_ testing.TB, q quota) allowFunc {
	limit, burst := rate.Limit(memRate), unreachable
	if q == onePerHour {
		limit, burst = rate.Every(time.Hour), 1
	}
	var mu sync.Mutex
	m := map[string]*rate.Limiter{}
	return func(key string) bool {
		mu.Lock()
		l, ok := m[key]
		if !ok {
			l = rate.NewLimiter(limit, burst)
			m[key] = l
		}
		mu.Unlock()
		return l.Allow()
	}
}

// newSethvargoMem is sethvargo/go-limiter's memorystore. Its bucket holds Tokens
// and refills them once per Interval (at a rate that is Interval/Tokens
// tokens a tick, so a large Tokens refills almost nothing): an Interval of an
// hour keeps any refill out of a run.
func newSethvargoMem(tb testing.TB, q quota) allowFunc {
	tokens := uint64(unreachable)
	if q == onePerHour {
		tokens = 1
	}
	st, err := sethmemory.New(&sethmemory.Config{Tokens: tokens, Interval: time.Hour})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = st.Close(context.Background()) })
	ctx := context.Background()
	return func(key string) bool {
		_, _, _, ok, _ := st.Take(ctx, key)
		return ok
	}
}

// newUluleMem is ulule/limiter's memory store: a fixed window of Period.
func newUluleMem(_ testing.TB, q quota) allowFunc {
	r := ulule.Rate{Period: time.Second, Limit: unreachable}
	if q == onePerHour {
		r = ulule.Rate{Period: time.Hour, Limit: 1}
	}
	lim := ulule.New(ululemem.NewStore(), r)
	ctx := context.Background()
	return func(key string) bool {
		c, err := lim.Get(ctx, key)
		return err == nil && !c.Reached
	}
}

// newThrottledMem is throttled's GCRA on its memstore (unbounded keys). Its
// MaxBurst counts the requests beyond the first. On a hot key, two goroutines
// exhaust throttled's default of 10 compare-and-swap attempts on some 7% of
// decisions, which it reports as an error, not a decision: the row raises
// that bound (throttled's own SetMaxCASAttemptsLimit), so that every call
// decides, as every other row's does.
func newThrottledMem(tb testing.TB, q quota) allowFunc {
	st, err := throttledmem.NewCtx(0)
	require.NoError(tb, err)
	rq := throttled.RateQuota{MaxRate: throttled.PerSec(memRate), MaxBurst: unreachable}
	if q == onePerHour {
		rq = throttled.RateQuota{MaxRate: throttled.PerHour(1), MaxBurst: 0}
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, rq)
	require.NoError(tb, err)
	rl.SetMaxCASAttemptsLimit(1 << 20)
	ctx := context.Background()
	return func(key string) bool {
		limited, _, err := rl.RateLimitCtx(ctx, key, 1)
		return err == nil && !limited
	}
}

// newHTTPRateLocal is go-chi/httprate's own decision, RateLimiter.OnLimit
// (what its middleware calls) on its default local counter, under its own
// limiter-wide mutex. OnLimit takes a request and a response writer: the
// request only lends its context, and every response header name is empty,
// which httprate takes as "do not set it", so the writer is never touched
// and the row makes no HTTP work, as the other rows make none. (OnLimit still
// formats the limit and reset values before it finds the names empty: those
// allocations are its own.)
func newHTTPRateLocal(_ testing.TB, q quota) allowFunc {
	limit, window := unreachable, time.Second
	if q == onePerHour {
		limit, window = 1, time.Hour
	}
	lim := httprate.NewRateLimiter(limit, window, httprate.WithResponseHeaders(httprate.ResponseHeaders{}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	var w http.ResponseWriter = headerSink{}
	return func(key string) bool {
		return !lim.OnLimit(w, r, key)
	}
}

// newEchoMemoryStore is Echo's middleware.RateLimiterMemoryStore, the store
// behind its RateLimiter middleware: one mutex over a map of x/time/rate
// limiters, swept of idle visitors (ExpiresIn, default 3 minutes) under that
// mutex.
func newEchoMemoryStore(_ testing.TB, q quota) allowFunc {
	cfg := echomiddleware.RateLimiterMemoryStoreConfig{Rate: rate.Limit(memRate), Burst: unreachable}
	if q == onePerHour {
		cfg = echomiddleware.RateLimiterMemoryStoreConfig{Rate: rate.Every(time.Hour), Burst: 1}
	}
	st := echomiddleware.NewRateLimiterMemoryStoreWithConfig(cfg)
	return func(key string) bool {
		ok, err := st.Allow(key)
		return err == nil && ok
	}
}
