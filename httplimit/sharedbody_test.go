package httplimit

import (
	"context"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// sharedBodyWriter takes an answer's body whole (SharedBodyWriter), and fails
// the test when the policy writes it through Write instead.
type sharedBodyWriter struct {
	setterWriter
	t      *testing.T
	shared []byte
}

func (w *sharedBodyWriter) WriteSharedBody(body []byte) { w.shared = body }

func (w *sharedBodyWriter) Write(b []byte) (int, error) {
	w.t.Errorf("Write(%q) on a SharedBodyWriter", b)
	return len(b), nil
}

// The policy's own answers reach a SharedBodyWriter without a copy and with
// no spare capacity an append could write into: denials in text and JSON, a
// key error; a HEAD request gets no body.
func TestSharedBody(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerHour(1), nil)
	noKey, err := New(p.Limiter(), WithKey(func(keyfuncs.Request) (string, error) { return "", keyfuncs.ErrKey }))
	must.NoError(t, err)
	first := fakereq.New("192.0.2.1:1")
	_, next := p.Handle(context.Background(), first, newSetterWriter())
	must.True(t, next)
	head := fakereq.New("192.0.2.1:1")
	head.MethodName = "HEAD"
	tests := []struct {
		name   string
		p      *Policy
		r      keyfuncs.Request
		status int
		body   string
	}{
		{"denied, text", p, fakereq.New("192.0.2.1:1"), 429, "Too Many Requests\n"},
		{"denied, json", p, fakereq.New("192.0.2.1:1", "Accept", "application/json"), 429, string(DeniedProblem(core.Decision{Limit: p.Limiter().Limits()[0]}).JSON())},
		{"denied, head", p, head, 429, ""},
		{"key error", noKey, fakereq.New("192.0.2.1:1"), 401, "Unauthorized\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &sharedBodyWriter{setterWriter: *newSetterWriter(), t: t}
			_, next := tt.p.Handle(context.Background(), tt.r, w)
			must.False(t, next)
			expect.Equal(t, tt.status, w.status)
			expect.Equal(t, tt.body, string(w.shared))
			expect.Equal(t, len(w.shared), cap(w.shared), "no spare capacity")
		})
	}
}
