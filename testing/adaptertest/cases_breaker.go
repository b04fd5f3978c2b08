package adaptertest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
)

// countingFailingStore fails every call, as a Redis that refuses
// connections, and counts them.
type countingFailingStore struct{ calls atomic.Int64 }

func (s *countingFailingStore) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	s.calls.Add(1)
	return core.Decision{}, errStoreDown
}

// checkAnOpenBreakerAnswersAtOnce: after two failures the limiter's breaker
// opens (core.WithBreaker), and the store is asked nothing until it probes:
// fail closed answers 503 with a Retry-After of the time left until the
// probe, rounded up, to GET and HEAD; fail open lets the request through.
func checkAnOpenBreakerAnswersAtOnce(t *testing.T, a Adapter) {
	b := core.BreakerConfig{Failures: 2, MinOpen: 3 * time.Second, MaxOpen: 3 * time.Second}
	st := &countingFailingStore{}
	e := start(t, a, st, core.GCRA, core.PerMinute(1), []core.Option{core.WithBreaker(b)}, httplimit.WithFailClosed())
	unavailable := func(retry string) response {
		return text(503, "Service Unavailable\n", map[string]string{"Retry-After": retry})
	}
	expect.Equal(t, unavailable("1"), e.do("GET", "/", peerA), "a store failure")
	expect.Equal(t, unavailable("1"), e.do("GET", "/", peerA), "the failure that opens the breaker")
	expect.Equal(t, unavailable("3"), e.do("GET", "/", peerA), "the open breaker: 3 s to the probe")
	e.clk.Advance(1500 * time.Millisecond)
	expect.Equal(t, unavailable("2"), e.do("GET", "/", peerB), "1.5 s to the probe, rounded up")
	head := e.do("HEAD", "/", peerA)
	expect.Equal(t, 503, head.Status)
	expect.Equal(t, "2", head.Headers["Retry-After"])
	expect.Empty(t, head.Body)
	expect.Equal(t, int64(2), st.calls.Load(), "the store is not asked while the breaker is open")

	st = &countingFailingStore{}
	e = start(t, a, st, core.GCRA, core.PerMinute(1), []core.Option{core.WithBreaker(b)})
	for range 5 {
		expect.Equal(t, 200, e.do("GET", "/", peerA).Status, "fail open")
	}
	expect.Equal(t, int64(2), st.calls.Load())
	expect.Equal(t, int64(5), e.calls.Load())
}
