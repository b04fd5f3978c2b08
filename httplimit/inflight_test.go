package httplimit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

func newInFlightPolicy(t *testing.T, st core.Store, n int64, opts ...Option) *Policy {
	t.Helper()
	p, _ := newPolicy(t, st, core.FixedWindow, core.PerMinute(10), []core.Option{core.WithInFlight(core.Concurrent(n))}, opts...)
	return p
}

func newMemoryStore(t *testing.T) *memory.Store {
	t.Helper()
	st, err := memory.New()
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// A request beyond N running gets 429 with Retry-After 1 and the policy's
// X-Concurrency-Limit, spends nothing of the rate, and is reported; a
// released slot admits the next.
func TestInFlightRefusal(t *testing.T) {
	rec := &recorder{}
	p := newInFlightPolicy(t, newMemoryStore(t), 2, WithObserver(rec))
	ctx := context.Background()
	var held []Pass
	for range 2 {
		w := httptest.NewRecorder()
		pass, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
		must.True(t, ok)
		expect.Equal(t, `"default";r=`+map[int]string{0: "9", 1: "8"}[len(held)]+";t=60", w.Header().Get(HeaderRateLimit))
		held = append(held, pass)
	}
	expect.Equal(t, int64(2), p.SlotsHeld())
	expect.Equal(t, core.Concurrent(2), p.InFlight())

	w := httptest.NewRecorder()
	_, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	must.False(t, ok)
	expect.Equal(t, http.StatusTooManyRequests, w.Code)
	expect.Equal(t, "1", w.Header().Get(HeaderRetryAfter))
	expect.Equal(t, `"default";n=2`, w.Header().Get(HeaderConcurrencyLimit))
	expect.Empty(t, w.Header().Get(HeaderRateLimit), "the rate fields describe rates, not slots")
	expect.Equal(t, "Too Many Requests\n", w.Body.String())
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeInFlightRefused}, rec.outcomes())
	expect.Equal(t, "inflight_refused", OutcomeInFlightRefused.String())
	expect.Contains(t, Outcomes(), OutcomeInFlightRefused)

	d, err := p.Limiter().Peek(ctx, "192.0.2.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(8), d.Remaining, "the refused request's rate was given back")

	w = httptest.NewRecorder()
	r := fakereq.New("192.0.2.1:1", "Accept", "application/json")
	_, ok = p.Handle(ctx, r, w)
	must.False(t, ok)
	expect.Equal(t, ContentTypeProblemJSON, w.Header().Get("Content-Type"))
	expect.Contains(t, w.Body.String(), `"violated-policies":["default"]`)
	expect.Contains(t, w.Body.String(), "At most 2 requests")

	held[0].Release()
	held[0].Release() // a second release gives back nothing more
	expect.Equal(t, int64(1), p.SlotsHeld())
	pass, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	_, ok = p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.False(t, ok)
	_, ok = p.Handle(ctx, fakereq.New("192.0.2.2:1"), httptest.NewRecorder())
	expect.True(t, ok, "another client has slots of its own")
	pass.Release()
	held[1].Release()
}

// Through a HeaderSetter (fasthttp, gRPC), the refusal names the same fields.
func TestInFlightRefusalHeaderSetter(t *testing.T) {
	p := newInFlightPolicy(t, newMemoryStore(t), 1)
	ctx := context.Background()
	pass, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), newSetterWriter())
	must.True(t, ok)
	defer pass.Release()
	w := newSetterWriter()
	_, ok = p.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	must.False(t, ok)
	expect.Equal(t, 429, w.status)
	expect.Equal(t, map[string]string{"Retry-After": "1", HeaderConcurrencyLimit: `"default";n=1`, "Content-Type": ContentTypeTextPlain}, w.headers)
}

// A dry run lets a request the in-flight limit refuses go on, without a slot,
// and reports it.
func TestInFlightDryRun(t *testing.T) {
	rec := &recorder{}
	p := newInFlightPolicy(t, newMemoryStore(t), 1, WithDryRun(), WithObserver(rec))
	ctx := context.Background()
	a, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	b, ok := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeInFlightDryRunRefused, OutcomeAllowed}, rec.outcomes())
	expect.Equal(t, int64(1), p.SlotsHeld())
	b.Release()
	expect.Equal(t, int64(1), p.SlotsHeld(), "b holds no slot")
	a.Release()
	expect.Zero(t, p.SlotsHeld())
}

// failingSlots is a memory store whose in-flight calls fail, as a Redis that
// is down does.
type failingSlots struct{ *memory.Store }

func (failingSlots) Acquire(context.Context, core.LeaseRequest) (core.LeaseDecision, error) {
	return core.LeaseDecision{}, errors.New("connection refused")
}

// A store that cannot take the slot fails open (the request goes on without
// one) or closed (503), as the rates do.
func TestInFlightStoreFails(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	open := newInFlightPolicy(t, failingSlots{newMemoryStore(t)}, 1, WithObserver(rec))
	pass, ok := open.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	pass.Release()
	expect.Equal(t, []Outcome{OutcomeFailedOpen, OutcomeAllowed}, rec.outcomes())

	closed := newInFlightPolicy(t, failingSlots{newMemoryStore(t)}, 1, WithFailClosed())
	w := httptest.NewRecorder()
	_, ok = closed.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	must.False(t, ok)
	expect.Equal(t, http.StatusServiceUnavailable, w.Code)
	d, err := closed.Limiter().Peek(ctx, "192.0.2.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(10), d.Remaining, "the refused request's rate was given back")
}

// In a Group, a later policy's refusal gives the earlier ones' slots back,
// and Release frees every member's.
func TestInFlightGroup(t *testing.T) {
	ctx := context.Background()
	st := newMemoryStore(t)
	a := newInFlightPolicy(t, st, 2)
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithNamespace("b"), core.WithInFlight(core.Concurrent(1)))
	must.NoError(t, err)
	b, err := New(lim, WithKey(peerKey))
	must.NoError(t, err)
	g, err := NewGroup(a, b)
	must.NoError(t, err)
	pass, ok := g.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	expect.Equal(t, int64(1), a.SlotsHeld())
	expect.Equal(t, int64(1), b.SlotsHeld())
	w := httptest.NewRecorder()
	_, ok = g.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	must.False(t, ok)
	expect.Equal(t, `"default";n=1`, w.Header().Get(HeaderConcurrencyLimit))
	expect.Equal(t, int64(1), a.SlotsHeld(), "a's slot of the refused request was given back")
	pass.Release()
	expect.Zero(t, a.SlotsHeld())
	expect.Zero(t, b.SlotsHeld())
}

// A policy without an in-flight limit holds nothing, and Release is a no-op.
func TestNoInFlight(t *testing.T) {
	p, _ := newPolicy(t, newMemoryStore(t), core.GCRA, core.PerMinute(10), nil)
	pass, ok := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, ok)
	pass.Release()
	expect.Zero(t, p.SlotsHeld())
	expect.True(t, p.InFlight().IsZero())
	expect.Zero(t, testing.AllocsPerRun(100, func() { pass.Release() }))
}
