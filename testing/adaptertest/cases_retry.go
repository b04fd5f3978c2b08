package adaptertest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// checkRetryAfterRoundsUp denies requests whose wait is not a whole number of
// seconds: Retry-After (and the reset, which equals it on a denial) must be
// rounded up, or a client that honours it comes back too early.
func checkRetryAfterRoundsUp(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.Every(1, 2*time.Second), nil)
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	deniedFor := func(retry string) response {
		h := denied("1", "2", retry)
		return text(429, "Too Many Requests\n", h)
	}
	expect.Equal(t, deniedFor("2"), e.do("GET", "/", peerA), "exactly 2 s")
	for _, step := range []struct {
		advance time.Duration
		want    string
		wait    string
	}{
		{500 * time.Millisecond, "2", "1.5 s"},
		{100 * time.Millisecond, "2", "1.4 s"},
		{399 * time.Millisecond, "2", "1.001 s"},
		{2 * time.Millisecond, "1", "0.999 s"},
	} {
		e.clk.Advance(step.advance)
		expect.Equal(t, deniedFor(step.want), e.do("GET", "/", peerA), "a wait of %s", step.wait)
	}
	expect.Equal(t, int64(1), e.calls.Load())
}

// checkFailClosedRetryAfterIsConfigurable: a fail-closed 503 carries
// WithUnavailableRetryAfter's wait, rounded up, to GET and HEAD alike, and a
// 500 for a peer that is not an IP carries none (a retry cannot help).
func checkFailClosedRetryAfterIsConfigurable(t *testing.T, a Adapter) {
	e := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), nil,
		httplimit.WithFailClosed(), httplimit.WithUnavailableRetryAfter(2500*time.Millisecond))
	expect.Equal(t, text(503, "Service Unavailable\n", map[string]string{"Retry-After": "3"}), e.do("GET", "/", peerA))
	head := e.do("HEAD", "/", peerA)
	expect.Equal(t, 503, head.Status)
	expect.Equal(t, "3", head.Headers["Retry-After"])
	expect.Empty(t, head.Body)
	expect.Equal(t, text(500, "Internal Server Error\n", map[string]string{}), e.do("GET", "/", "not-an-address"))
	expect.Zero(t, e.calls.Load())
}

// checkAFullStoreRefusesNewKeys: a memory store that holds one key and
// refuses new ones when full answers a new client 503 with Retry-After, even
// though the policy fails open, and tells the observer; the client it holds
// keeps its exact count.
func checkAFullStoreRefusesNewKeys(t *testing.T, a Adapter) {
	var mu sync.Mutex
	var seen []string
	obs := httplimit.ObserverFunc(func(e httplimit.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e.Outcome.String())
		if e.Outcome == httplimit.OutcomeStoreFull {
			expect.True(t, errors.Is(e.Err, core.ErrStoreFull), "the observer hears why")
		}
	})
	e := start(t, a, oneKeyStore(t), core.GCRA, core.PerMinute(1), nil, httplimit.WithObserver(obs))
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	expect.Equal(t, text(503, "Service Unavailable\n", map[string]string{"Retry-After": "1"}), e.do("GET", "/", peerB))
	expect.Equal(t, text(429, "Too Many Requests\n", denied("1", "60", "60")), e.do("GET", "/", peerA), "the held client keeps its count")
	mu.Lock()
	defer mu.Unlock()
	expect.Equal(t, []string{"allowed", "store_full", "denied"}, seen)
	expect.Equal(t, int64(1), e.calls.Load())
}

// oneKeyStore returns a memory store that holds one key and refuses new ones
// when full.
func oneKeyStore(t *testing.T) core.Store {
	st, err := memory.New(memory.WithShards(1), memory.WithMaxKeys(1), memory.WithRefuseWhenFull(), memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}
