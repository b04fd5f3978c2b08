package adaptertest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// blocker holds the handler of the first request it sees until released,
// and lets every later one through: a request running while others arrive.
type blocker struct {
	first    atomic.Bool
	entered  chan struct{}
	release  chan struct{}
	returned chan struct{}
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
}

// call is the env's onCall: the first call waits for release.
func (b *blocker) call() {
	if b.first.CompareAndSwap(false, true) {
		close(b.entered)
		<-b.release
		defer close(b.returned)
	}
}

// startInFlight starts an env whose limiter has an in-flight limit of n
// slots beside a rate of 100 a minute, and whose first handler blocks.
func startInFlight(t *testing.T, a Adapter, n int64, opts ...httplimit.Option) (*env, *blocker) {
	t.Helper()
	b := newBlocker()
	e := newEnv(t)
	e.onCall = b.call
	e.run(a, nil, core.FixedWindow, core.PerMinute(100), []core.Option{core.WithInFlight(core.Concurrent(n))}, opts...)
	return e, b
}

// held sends a request whose handler blocks, and returns the channel its
// answer's status arrives on, once the handler runs.
func (e *env) held(ctx context.Context, b *blocker) <-chan int {
	done := make(chan int, 1)
	go func() {
		resp, err := e.send(ctx, "GET", "/", peerA)
		if err != nil {
			done <- 0
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-b.entered
	return done
}

// waitNoSlot waits until the env's limiter holds no slot: the middleware
// releases it once the handler returned, as the response goes out.
func (e *env) waitNoSlot() {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.lim.SlotsHeld() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	must.Zero(e.t, e.lim.SlotsHeld(), "the slot was released")
}

// A request beyond the in-flight limit gets 429 with Retry-After and the
// policy's X-Concurrency-Limit while another of its key runs; the slot comes
// back when the handler returns, and a client that hangs up leaves its slot
// to its handler, which releases it when it returns.
func checkInFlightLimit(t *testing.T, a Adapter) {
	e, b := startInFlight(t, a, 1)
	running := e.held(context.Background(), b)
	refused := e.do("GET", "/", peerA)
	expect.Equal(t, 429, refused.Status)
	expect.Equal(t, "1", refused.Headers[httplimit.HeaderRetryAfter])
	expect.Empty(t, refused.Headers[httplimit.HeaderRateLimit], "the rate fields describe rates")
	expect.Equal(t, 200, e.do("GET", "/", peerB).Status, "another client's slots are its own")
	expect.Equal(t, int64(1), e.lim.SlotsHeld())
	close(b.release)
	expect.Equal(t, 200, <-running)
	e.waitNoSlot()
	for range 3 {
		expect.Equal(t, 200, e.do("GET", "/", peerA).Status, "each returned request gave its slot back")
	}
	e.waitNoSlot()

	if !a.Disconnects {
		return
	}
	e2, b2 := startInFlight(t, a, 1)
	ctx, hangUp := context.WithCancel(context.Background())
	gone := e2.held(ctx, b2)
	hangUp()
	<-gone
	expect.Equal(t, 429, e2.do("GET", "/", peerA).Status, "the handler still runs: its slot is held")
	close(b2.release)
	<-b2.returned
	e2.waitNoSlot()
	expect.Equal(t, 200, e2.do("GET", "/", peerA).Status)
}

// inflightOutcomes has obs see an in-flight refusal and a dry run's; it
// returns the OutcomeAllowed events it caused.
func inflightOutcomes(t *testing.T, a Adapter, obs httplimit.Observer) int {
	e, b := startInFlight(t, a, 1, httplimit.WithObserver(obs))
	running := e.held(context.Background(), b)
	expect.Equal(t, 429, e.do("GET", "/", peerA).Status)
	close(b.release)
	<-running
	dry, db := startInFlight(t, a, 1, httplimit.WithObserver(obs), httplimit.WithDryRun())
	running = dry.held(context.Background(), db)
	expect.Equal(t, 200, dry.do("GET", "/", peerA).Status, "a dry run lets it go on")
	close(db.release)
	<-running
	return 3 // the two held requests, and the dry run's refused one
}
