package httplimit

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
)

// setterWriter is a ResponseWriter that sets headers one at a time, as the
// Fiber adapter's does.
type setterWriter struct {
	headers map[string]string
	status  int
	body    []byte
}

func (w *setterWriter) SetHeaders(h Headers) {
	for i := range h.Len() {
		name, value := h.At(i)
		w.headers[name] = value
	}
}

var _ HeaderSetter = (*setterWriter)(nil)

func (w *setterWriter) WriteHeader(status int) { w.status = status }
func (w *setterWriter) Write(b []byte) (int, error) {
	w.body = append(w.body, b...)
	return len(b), nil
}
func newSetterWriter() *setterWriter { return &setterWriter{headers: map[string]string{}} }

// bareWriter can set no header at all.
type bareWriter struct{ status int }

func (w *bareWriter) WriteHeader(status int)      { w.status = status }
func (w *bareWriter) Write(b []byte) (int, error) { return len(b), nil }

// Handle writes the same answer through a Header map and through a
// HeaderSetter, and still answers a writer that can set no header.
func TestHandleWriters(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.FixedWindow, core.PerMinute(1), nil)
	ctx := context.Background()

	rec := httptest.NewRecorder()
	_, next := p.Handle(ctx, fakereq.New("192.0.2.1:1"), rec)
	must.True(t, next)
	rec = httptest.NewRecorder()
	_, next = p.Handle(ctx, fakereq.New("192.0.2.1:1"), rec)
	must.False(t, next)

	p2, _ := newPolicy(t, &mapStore{}, core.FixedWindow, core.PerMinute(1), nil)
	_, next = p2.Handle(ctx, fakereq.New("192.0.2.1:1"), newSetterWriter())
	must.True(t, next)
	sw := newSetterWriter()
	_, next = p2.Handle(ctx, fakereq.New("192.0.2.1:1"), sw)
	must.False(t, next)
	expect.Equal(t, rec.Code, sw.status)
	expect.Equal(t, rec.Body.String(), string(sw.body))
	for name, values := range rec.Header() {
		expect.Equal(t, values[0], sw.headers[name], name)
	}
	expect.Len(t, sw.headers, len(rec.Header()))

	p3, _ := newPolicy(t, &mapStore{}, core.FixedWindow, core.PerMinute(1), nil)
	_, next = p3.Handle(ctx, fakereq.New("192.0.2.1:1"), &bareWriter{})
	must.True(t, next)
	bw := &bareWriter{}
	_, next = p3.Handle(ctx, fakereq.New("192.0.2.1:1"), bw)
	expect.False(t, next)
	expect.Equal(t, http.StatusTooManyRequests, bw.status)
}

// Without WithKey the key is the peer's IP: two peers have two quotas, and a
// peer that is not an IP address gets 500 (the server's configuration, not
// the client's credentials, is at fault), never an unlimited pass.
func TestHandleDefaultKeyIsThePeerIP(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	p, err := New(lim, WithLogger(slog.New(slog.DiscardHandler)))
	must.NoError(t, err)
	ctx := context.Background()
	for _, peer := range []string{"192.0.2.1:1", "192.0.2.2:1"} {
		_, next := p.Handle(ctx, fakereq.New(peer), httptest.NewRecorder())
		expect.True(t, next, peer)
	}
	_, next := p.Handle(ctx, fakereq.New("192.0.2.1:2"), httptest.NewRecorder())
	expect.False(t, next, "the same IP from another port is the same client")
	rec := httptest.NewRecorder()
	_, next = p.Handle(ctx, fakereq.New("@unix-socket"), rec)
	expect.False(t, next)
	expect.Equal(t, http.StatusInternalServerError, rec.Code)
	expect.Equal(t, "Internal Server Error\n", rec.Body.String())
}

// MustPerIP builds a working policy from a literal and panics, naming the
// literal, on a malformed one.
func TestMustPerIP(t *testing.T) {
	p := MustPerIP("2/m")
	ctx := context.Background()
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		if _, next := p.Handle(ctx, fakereq.New("192.0.2.1:1"), rec); next {
			codes = append(codes, 0)
		} else {
			codes = append(codes, rec.Code)
		}
	}
	expect.Equal(t, []int{0, 0, 429}, codes)
	for _, bad := range []string{"", "100", "0/m", "10/fortnight", "-1/s", "10/s burst -3"} {
		expect.PanicsWithValue(t, `ratewarden: PerIP("`+bad+`"): `+parseError(bad), func() { MustPerIP(bad) }, bad)
	}
}

func parseError(s string) string {
	_, err := core.ParseLimit(s)
	return err.Error()
}

// heldRequest is a request view whose server ends held requests itself.
type heldRequest struct {
	*fakereq.Request
	hold context.Context
}

func (r heldRequest) HoldContext() context.Context { return r.hold }

// A held request waits on the view's HoldContext when it has one, not on
// Handle's context: here it ends at once, so the request is dropped.
func TestHandleHoldContext(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, core.PerHour(1).WithBurst(5), nil)
	ctx := context.Background()
	_, next := p.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	must.True(t, next, "the first request is not held")
	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, next = p.Handle(ctx, heldRequest{fakereq.New("192.0.2.1:1"), ended}, httptest.NewRecorder())
	expect.False(t, next, "a held request whose hold context ended is dropped")
}
