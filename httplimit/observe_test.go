package httplimit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// errorsTo is an option whose observer appends every event's error to got.
func errorsTo(got *[]error) Option {
	return WithObserver(ObserverFunc(func(e Event) {
		if e.Err != nil {
			*got = append(*got, e.Err)
		}
	}))
}

// recorder is an Observer that keeps every event, without its request.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Request = nil
	r.events = append(r.events, e)
}

func (r *recorder) outcomes() []Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Outcome, len(r.events))
	for i, e := range r.events {
		out[i] = e.Outcome
	}
	return out
}

func (r *recorder) last() Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[len(r.events)-1]
}

// memPolicy is a policy on a fresh memory store and a manual clock, keyed
// by peer address, with opts.
func memPolicy(t *testing.T, alg core.Algorithm, l core.Limit, opts ...Option) (*Policy, *core.ManualClock) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return newPolicy(t, st, alg, l, nil, opts...)
}

// serve hands r to p.Handle with a recorder and returns what it answered.
func serve(p *Policy, r keyfuncs.Request) (*httptest.ResponseRecorder, Pass, bool) {
	w := httptest.NewRecorder()
	pass, next := p.Handle(context.Background(), r, w)
	return w, pass, next
}

// Every path through the policy reaches the observer, with the outcome, the
// tier's name, the decision and the error it should carry.
func TestObserverSeesEveryOutcome(t *testing.T) {
	skip := WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" })
	noKey := WithKey(func(r keyfuncs.Request) (string, error) {
		if r.Header("X-Key") == "" {
			return "", keyfuncs.ErrKey
		}
		return r.Header("X-Key"), nil
	})
	boom := errors.New("store down")
	tests := []struct {
		name    string
		store   core.Store
		opts    []Option
		want    []Outcome
		wantErr error
	}{
		{"allowed then denied", nil, nil, []Outcome{OutcomeAllowed, OutcomeDenied}, nil},
		{"dry run", nil, []Option{WithDryRun()}, []Outcome{OutcomeAllowed, OutcomeDryRunDenied}, nil},
		{"skipped", nil, []Option{skip}, []Outcome{OutcomeSkipped, OutcomeSkipped}, nil},
		{"key error", nil, []Option{noKey}, []Outcome{OutcomeKeyError, OutcomeKeyError}, keyfuncs.ErrKey},
		{"fail open", &mapStore{fail: boom}, nil, []Outcome{OutcomeFailedOpen, OutcomeFailedOpen}, boom},
		{"fail closed", &mapStore{fail: boom}, []Option{WithFailClosed()}, []Outcome{OutcomeFailedClosed, OutcomeFailedClosed}, boom},
		{"dry run fails open", &mapStore{fail: boom}, []Option{WithFailClosed(), WithDryRun()}, []Outcome{OutcomeFailedOpen, OutcomeFailedOpen}, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			opts := append([]Option{WithObserver(rec)}, tt.opts...)
			var p *Policy
			if tt.store == nil {
				p, _ = memPolicy(t, core.FixedWindow, core.PerMinute(1), opts...)
			} else {
				p, _ = newPolicy(t, tt.store, core.FixedWindow, core.PerMinute(1), nil, opts...)
			}
			for range 2 {
				r := fakereq.New("192.0.2.1:1")
				r.PathName = "/health"
				serve(p, r)
			}
			expect.Equal(t, tt.want, rec.outcomes())
			e := rec.last()
			expect.Equal(t, "default", e.Policy)
			if tt.store == nil {
				expect.Zero(t, e.StoreLatency, "a store that decides in process is not timed")
			} else if tt.want[0] != OutcomeKeyError && tt.want[0] != OutcomeSkipped {
				expect.Positive(t, e.StoreLatency, "a store call over the network is timed")
			}
			if tt.wantErr != nil {
				expect.ErrorIs(t, e.Err, tt.wantErr)
				expect.False(t, e.Decision.Allowed)
				return
			}
			expect.NoError(t, e.Err)
			if e.Outcome == OutcomeDenied || e.Outcome == OutcomeDryRunDenied {
				expect.Equal(t, time.Minute, e.Decision.RetryAfter)
			}
		})
	}
}

// The observer sees the request during Observe, and several observers see
// every event in order.
func TestObserverSeesTheRequestAndSeveralObserversAreCalled(t *testing.T) {
	var got []string
	first := ObserverFunc(func(e Event) { got = append(got, "first "+e.Request.Header("X-Who")) })
	second := ObserverFunc(func(e Event) { got = append(got, "second "+e.Outcome.String()) })
	p, _ := memPolicy(t, core.GCRA, core.PerMinute(5), WithObserver(first), WithObserver(second), WithObserver(first))
	serve(p, fakereq.New("192.0.2.1:1", "X-Who", "alice"))
	expect.Equal(t, []string{"first alice", "second allowed", "first alice"}, got)
}

// logBuffer is a slog logger writing text lines to a buffer, without times.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	return slog.New(h), &b
}

func lines(b *bytes.Buffer) []string {
	s := strings.TrimSpace(b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// A panicking observer never breaks a request: it proceeds as decided, and
// the panic is logged once per interval with the count left out.
func TestObserverPanicIsRecoveredAndLoggedOncePerInterval(t *testing.T) {
	logger, buf := logBuffer()
	panicky := ObserverFunc(func(Event) { panic("observer bug") })
	p, clk := memPolicy(t, core.FixedWindow, core.PerMinute(2), WithObserver(panicky), WithLogger(logger))
	p.logs.now = clk.Now
	var codes []int
	for range 3 {
		w, _, _ := serve(p, fakereq.New("192.0.2.1:1"))
		codes = append(codes, w.Code)
	}
	expect.Equal(t, []int{200, 200, 429}, codes, "requests proceed as decided")
	must.Len(t, lines(buf), 1)
	expect.Contains(t, buf.String(), `msg="ratewarden: observer panicked; the request proceeds as decided" policy=default err="ratewarden: observer panic: observer bug" suppressed=0`)
	clk.Advance(LogInterval)
	serve(p, fakereq.New("192.0.2.1:1"))
	must.Len(t, lines(buf), 2)
	expect.Contains(t, lines(buf)[1], "suppressed=2")
}

// A store outage writes one line per interval, not one per request, with an
// observer or without (an observer must not silence it); only
// WithoutStoreErrorLog turns it off. The breaker is off here, so that every
// request asks the store.
func TestStoreErrorsAreLoggedOncePerIntervalWhateverTheObservers(t *testing.T) {
	boom := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	for _, tt := range []struct {
		name      string
		opts      []Option
		wantLines int
	}{
		{"no observer", nil, 2},
		{"observer", []Option{WithObserver(&recorder{})}, 2},
		{"two observers", []Option{WithObserver(&recorder{}), WithObserver(&recorder{})}, 2},
		{"without the store error log", []Option{WithObserver(&recorder{}), WithoutStoreErrorLog()}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := logBuffer()
			p, clk := newPolicy(t, &mapStore{fail: boom}, core.GCRA, core.PerMinute(1), []core.Option{core.WithoutBreaker()}, append(tt.opts, WithLogger(logger))...)
			p.logs.now = clk.Now
			for range 100 {
				w, _, next := serve(p, fakereq.New("192.0.2.1:1"))
				must.True(t, next)
				must.Equal(t, 200, w.Code)
			}
			clk.Advance(LogInterval - time.Nanosecond)
			serve(p, fakereq.New("192.0.2.1:1"))
			clk.Advance(time.Nanosecond)
			serve(p, fakereq.New("192.0.2.1:1"))
			got := lines(buf)
			must.Len(t, got, tt.wantLines)
			if tt.wantLines > 0 {
				expect.Contains(t, got[0], `msg="ratewarden: rate limiter failed; requests pass unlimited (fail open)" policy=default err="dial tcp 10.0.0.7:6379: connection refused" suppressed=0`)
				expect.Contains(t, got[1], "suppressed=100")
			}
		})
	}
}

// With two observers, one that panics hides the event from no other, in
// either order, and the panic is logged.
func TestAPanickingObserverBlindsNoOther(t *testing.T) {
	panicky := ObserverFunc(func(Event) { panic("observer bug") })
	for _, tt := range []struct {
		name  string
		order func(rec Observer) []Option
	}{
		{"panicking first", func(rec Observer) []Option { return []Option{WithObserver(panicky), WithObserver(rec)} }},
		{"panicking last", func(rec Observer) []Option { return []Option{WithObserver(rec), WithObserver(panicky)} }},
		{"between two", func(rec Observer) []Option {
			return []Option{WithObserver(rec), WithObserver(panicky), WithObserver(rec)}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := logBuffer()
			rec := &recorder{}
			p, _ := memPolicy(t, core.FixedWindow, core.PerMinute(1), append(tt.order(rec), WithLogger(logger))...)
			var codes []int
			for range 2 {
				w, _, _ := serve(p, fakereq.New("192.0.2.1:1"))
				codes = append(codes, w.Code)
			}
			expect.Equal(t, []int{200, 429}, codes, "requests proceed as decided")
			per := len(tt.order(rec)) - 1 // the recorder's places
			want := []Outcome{}
			for _, oc := range []Outcome{OutcomeAllowed, OutcomeDenied} {
				for range per {
					want = append(want, oc)
				}
			}
			expect.Equal(t, want, rec.outcomes(), "the other observers saw every event")
			must.Len(t, lines(buf), 1, "the panic is logged, once per interval")
			expect.Contains(t, buf.String(), "ratewarden: observer panicked")
		})
	}
	// The combinator alone (an observers value told directly) isolates too.
	rec := &recorder{}
	observers{panicky, rec}.Observe(Event{Outcome: OutcomeAllowed})
	expect.Equal(t, []Outcome{OutcomeAllowed}, rec.outcomes())
}

// A peer that is not an IP is logged even with an observer, which sees it
// as a key error wrapping keyfuncs.ErrPeerNotIP.
func TestPeerNotIPIsLoggedAndObserved(t *testing.T) {
	logger, buf := logBuffer()
	rec := &recorder{}
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	p, err := New(lim, WithObserver(rec), WithLogger(logger))
	must.NoError(t, err)
	w, _, next := serve(p, fakereq.New("@", "Accept", "application/json"))
	expect.False(t, next)
	expect.Equal(t, 500, w.Code)
	expect.JSONEq(t, `{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"The server cannot identify clients for rate limiting on this listener."}`, w.Body.String())
	expect.ErrorIs(t, rec.last().Err, keyfuncs.ErrPeerNotIP)
	expect.Equal(t, OutcomeKeyError, rec.last().Outcome)
	expect.Contains(t, buf.String(), "the peer address is not an IP")
}

// slowObserver blocks until released, counting what it saw.
type slowObserver struct {
	release chan struct{}
	mu      sync.Mutex
	seen    []Event
}

func (s *slowObserver) Observe(e Event) {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, e)
}

// NonBlocking never blocks the request path: a full queue drops and counts,
// the request view never reaches the goroutine, and Close delivers what was
// queued and ends the goroutine.
func TestNonBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &slowObserver{release: make(chan struct{})}
		a, err := NonBlocking(slow, 2)
		must.NoError(t, err)
		r := fakereq.New("192.0.2.1:1")
		a.Observe(Event{Outcome: OutcomeAllowed, Policy: "default", Request: r})
		synctest.Wait() // the goroutine holds the first event, blocked
		for range 4 {
			a.Observe(Event{Outcome: OutcomeAllowed, Policy: "default", Request: r})
		}
		expect.Equal(t, uint64(2), a.Dropped())
		close(slow.release)
		must.NoError(t, a.Close())
		expect.Len(t, slow.seen, 3)
		for _, e := range slow.seen {
			expect.Nil(t, e.Request, "the request view must not outlive the request")
			expect.Equal(t, OutcomeAllowed, e.Outcome)
		}
		a.Observe(Event{Outcome: OutcomeDenied})
		expect.Equal(t, uint64(3), a.Dropped(), "after Close events are dropped")
		expect.ErrorIs(t, a.Close(), ErrClosed)
	})
}

// An observer behind NonBlocking that panics loses its event, not the
// goroutine.
func TestNonBlockingSurvivesAPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen int
		o := ObserverFunc(func(e Event) {
			if e.Outcome == OutcomeDenied {
				panic("bug")
			}
			seen++
		})
		a, err := NonBlocking(o, 4)
		must.NoError(t, err)
		a.logs.logger = slog.New(slog.DiscardHandler)
		a.Observe(Event{Outcome: OutcomeDenied})
		a.Observe(Event{Outcome: OutcomeAllowed})
		must.NoError(t, a.Close())
		expect.Equal(t, 1, seen)
	})
}

func TestNonBlockingRejectsBadInput(t *testing.T) {
	for _, tt := range []struct {
		name   string
		o      Observer
		buffer int
	}{
		{"nil observer", nil, 1},
		{"zero buffer", &recorder{}, 0},
		{"negative buffer", &recorder{}, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NonBlocking(tt.o, tt.buffer)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Nil(t, a)
		})
	}
}

// Outcomes hands each caller a slice of its own: changing one changes no
// other caller's.
func TestOutcomesIsACopy(t *testing.T) {
	first := Outcomes()
	must.Equal(t, OutcomeAllowed, first[0])
	first[0] = OutcomeDenied
	expect.Equal(t, OutcomeAllowed, Outcomes()[0])
	expect.Equal(t, len(outcomeNames)-1, len(Outcomes()), "every named outcome, none twice")
}
