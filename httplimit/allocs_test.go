package httplimit

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The documented cost of a decision on the memory store, with the default
// key (the client IP) and headers, asserted rather than only reported by a
// benchmark: nothing through a HeaderSetter (fasthttp), and through a net/http
// Header map the one block of header values the map keeps (on a denial, the
// answer's Content-Type lies in it too).
func TestHandleAllocationsOnTheMemoryStore(t *testing.T) {
	for _, tt := range []struct {
		name    string
		writer  func() ResponseWriter
		limit   core.Limit
		allowed bool
		allocs  float64
	}{
		{"allowed, HeaderSetter", func() ResponseWriter { return newSetterWriter() }, core.PerSecond(1_000_000).WithBurst(1 << 40), true, 0},
		{"denied, HeaderSetter", func() ResponseWriter { return newSetterWriter() }, core.PerHour(1), false, 0},
		{"allowed, Header map", func() ResponseWriter { return httptest.NewRecorder() }, core.PerSecond(1_000_000).WithBurst(1 << 40), true, 1},
		{"denied, Header map", func() ResponseWriter { return httptest.NewRecorder() }, core.PerHour(1), false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := memory.New(memory.WithSweepInterval(0))
			must.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			lim, err := core.NewLimiter(st, core.GCRA, tt.limit)
			must.NoError(t, err)
			p, err := New(lim)
			must.NoError(t, err)
			r, w := fakereq.New("192.0.2.1:1234"), tt.writer()
			p.Handle(context.Background(), r, w) // the key's first request: the store makes room for it
			var next bool
			allocs := testing.AllocsPerRun(200, func() {
				w = discardBody(w)
				_, next = p.Handle(context.Background(), r, w)
			})
			expect.Equal(t, tt.allowed, next)
			expect.Equal(t, tt.allocs, allocs)
		})
	}
}

// discardBody empties w's body, so that appending to it costs nothing across
// runs, and returns w.
func discardBody(w ResponseWriter) ResponseWriter {
	switch w := w.(type) {
	case *httptest.ResponseRecorder:
		w.Body.Reset()
	case *setterWriter:
		w.body = w.body[:0]
	}
	return w
}

// peekingReq is a request view that can peek at its headers: its Header
// would copy, so the policy must not call it for Accept.
type peekingReq struct {
	*fakereq.Request
	copies int
}

func (r *peekingReq) Header(name string) string {
	r.copies++
	return r.Request.Header(name)
}

func (r *peekingReq) PeekHeader(name string) string { return r.Request.Header(name) }

// The Accept header of an answer is peeked at, not copied, when the view can
// peek (HeaderPeeker), and still negotiates the body.
func TestAcceptIsPeeked(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerHour(1), nil)
	r := &peekingReq{Request: fakereq.New("192.0.2.1:1", "Accept", "application/json")}
	_, next := p.Handle(context.Background(), r, newSetterWriter())
	must.True(t, next)
	w := newSetterWriter()
	_, next = p.Handle(context.Background(), r, w)
	must.False(t, next)
	expect.Equal(t, 429, w.status)
	expect.Equal(t, ContentTypeProblemJSON, w.headers["Content-Type"])
	expect.Zero(t, r.copies)
}
