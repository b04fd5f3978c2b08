package httplimit

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// fullStorePolicy returns a policy of one request per minute per client IP on
// a memory store that holds two keys and refuses new ones when full, and the
// store.
func fullStorePolicy(t *testing.T, opts ...Option) (*Policy, *memory.Store, *core.ManualClock) {
	t.Helper()
	st, err := memory.New(memory.WithShards(1), memory.WithMaxKeys(2), memory.WithRefuseWhenFull(), memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	p, clk := newPolicy(t, st, core.GCRA, core.PerMinute(1), nil, opts...)
	return p, st, clk
}

// A store that refuses a new key is not an outage: the request gets 503 with
// Retry-After whatever the fail mode (failing open would let a flood of new
// keys pass unlimited), the observer hears OutcomeStoreFull with the error,
// and the clients the store holds keep their exact counts. A dry run lets the
// request go on, and still reports it.
func TestAFullStoreRefusesNewKeysWith503(t *testing.T) {
	for _, tt := range []struct {
		name  string
		opts  []Option
		next  bool   // the refused request goes on
		retry string // its Retry-After
	}{
		{"fail open (default)", nil, false, "1"},
		{"fail closed", []Option{WithFailClosed()}, false, "1"},
		{"Retry-After of 4.2 s", []Option{WithUnavailableRetryAfter(4200 * time.Millisecond)}, false, "5"},
		{"dry run", []Option{WithDryRun()}, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p, st, _ := fullStorePolicy(t, append([]Option{WithObserver(rec)}, tt.opts...)...)
			for _, held := range []string{"192.0.2.1:1", "192.0.2.2:1"} {
				_, next := p.Handle(context.Background(), fakereq.New(held), httptest.NewRecorder())
				must.True(t, next, held)
			}
			for _, w := range []ResponseWriter{httptest.NewRecorder(), newSetterWriter()} {
				_, next := p.Handle(context.Background(), fakereq.New("192.0.2.3:1", "Accept", "application/json"), w)
				expect.Equal(t, tt.next, next)
				if tt.next {
					expect.Empty(t, writtenHeaders(w), "a dry run's refused key gets nothing: nothing was decided")
					continue
				}
				expect.Equal(t, 503, writtenStatus(w))
				expect.Equal(t, map[string]string{HeaderRetryAfter: tt.retry, "Content-Type": ContentTypeProblemJSON}, writtenHeaders(w))
			}
			_, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
			expect.Equal(t, tt.next, next, "a held client keeps its exact count: its second request of the minute is denied (but for a dry run)")

			want := []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeStoreFull, OutcomeStoreFull, OutcomeDenied}
			if tt.next {
				want[4] = OutcomeDryRunDenied
			}
			must.Equal(t, want, rec.outcomes())
			e := rec.events[2]
			expect.ErrorIs(t, e.Err, core.ErrStoreFull)
			expect.Equal(t, "default", e.Policy)
			expect.Equal(t, core.Decision{}, e.Decision)
			expect.Equal(t, memory.Stats{Keys: 2, Refused: 2}, st.Stats())
		})
	}
}

// With no observer, refusals are logged at most once per LogInterval, with the
// number left out, as store errors are.
func TestAFullStoreIsLoggedOncePerInterval(t *testing.T) {
	logger, buf := logBuffer()
	p, _, clk := fullStorePolicy(t, WithLogger(logger))
	p.logs.now = clk.Now
	for i := range 5 {
		w, _, _ := serve(p, fakereq.New("192.0.2."+string(rune('1'+i))+":1"))
		expect.Equal(t, []int{200, 200, 503, 503, 503}[i], w.Code, "request %d", i)
	}
	must.Len(t, lines(buf), 1)
	expect.Contains(t, buf.String(), `msg="ratewarden: the store is full and refuses new keys; their requests get 503" policy=default err=`)
	expect.Contains(t, buf.String(), `ratewarden: store full" suppressed=0`)
	clk.Advance(LogInterval)
	w, _, _ := serve(p, fakereq.New("192.0.2.9:1"))
	expect.Equal(t, 503, w.Code)
	must.Len(t, lines(buf), 2)
	expect.Contains(t, lines(buf)[1], "suppressed=2")
}
