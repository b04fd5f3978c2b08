package httplimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestInFlightWaitBadValues(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(10))
	must.NoError(t, err)
	for _, o := range []Option{
		WithInFlightWait(0, time.Second), WithInFlightWait(MaxInFlightWaiting+1, time.Second),
		WithInFlightWait(1, 0), WithInFlightWait(1, -time.Second), WithInFlightWait(1, 2*time.Minute),
	} {
		_, err := New(lim, o)
		expect.ErrorIs(t, err, core.ErrInvalidOption)
	}
}

// handled is what one Handle returned.
type handled struct {
	pass Pass
	ok   bool
	code int
}

// handleAsync runs Handle for peer on its own goroutine.
func handleAsync(ctx context.Context, p *Policy, peer string) <-chan handled {
	done := make(chan handled, 1)
	go func() {
		w := httptest.NewRecorder()
		pass, ok := p.Handle(ctx, fakereq.New(peer), w)
		done <- handled{pass, ok, w.Code}
	}()
	return done
}

// A waiting request takes the slot released on its instance; the queue is
// bounded: a request beyond it is refused at once.
func TestInFlightWaitTakesTheReleasedSlot(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	defer st.Close()
	rec := &recorder{}
	p := newInFlightPolicy(t, st, 1, WithInFlightWait(1, time.Minute), WithObserver(rec))
	ctx := context.Background()
	first, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	waiting := handleAsync(ctx, p, "192.0.2.1:1")
	for p.inflightWaiting.Load() == 0 {
		time.Sleep(time.Millisecond) // until the second request waits
	}
	w := httptest.NewRecorder()
	_, ok = p.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	expect.False(t, ok, "the queue of 1 is full")
	expect.Equal(t, http.StatusTooManyRequests, w.Code)

	first.Release()
	select {
	case h := <-waiting:
		must.True(t, h.ok, "the waiting request took the released slot")
		expect.Equal(t, int64(1), p.SlotsHeld())
		h.pass.Release()
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting request never got the released slot")
	}
	expect.Zero(t, p.SlotsHeld())
	expect.Zero(t, p.inflightWaiting.Load())
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeInFlightRefused, OutcomeAllowed}, rec.outcomes())
}

// A request that waits past the timeout, or whose client leaves, is refused
// as without the queue, and spends nothing.
func TestInFlightWaitTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := memory.New(memory.WithSweepInterval(0))
		must.NoError(t, err)
		defer st.Close()
		p := newInFlightPolicy(t, st, 1, WithInFlightWait(5, 2*time.Second))
		ctx := context.Background()
		first, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
		must.True(t, ok)
		defer first.Release()

		waiting := handleAsync(ctx, p, "192.0.2.1:1")
		time.Sleep(time.Second)
		synctest.Wait()
		expect.Equal(t, int64(1), p.inflightWaiting.Load(), "still waiting after 1s")
		time.Sleep(time.Second + time.Millisecond)
		h := <-waiting
		expect.False(t, h.ok)
		expect.Equal(t, http.StatusTooManyRequests, h.code)

		cctx, leave := context.WithCancel(ctx)
		waiting = handleAsync(cctx, p, "192.0.2.1:1")
		synctest.Wait()
		leave()
		h = <-waiting
		expect.False(t, h.ok, "its client left")
		d, err := p.Limiter().Peek(ctx, "192.0.2.1:1")
		must.NoError(t, err)
		expect.Equal(t, int64(9), d.Remaining, "the refused requests' rates were given back")
	})
}
