package httplimit

import (
	"context"
	"errors"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// acceptCounter is a request view that counts the reads of its Accept header.
type acceptCounter struct {
	*fakereq.Request
	reads int
}

func (r *acceptCounter) Header(name string) string {
	if name == "Accept" {
		r.reads++
	}
	return r.Request.Header(name)
}

func (r *acceptCounter) PeekHeader(name string) string { return r.Header(name) }

// WithBodyFormat fixes the body of a denial, a key error and a fail-closed
// 503 without reading Accept; by default Accept negotiates it.
func TestWithBodyFormat(t *testing.T) {
	keyErr := WithKey(func(keyfuncs.Request) (string, error) { return "", keyfuncs.ErrKey })
	tests := []struct {
		name     string
		format   []Option
		answer   string // denied, key error, fail closed
		accept   string
		wantJSON bool
		reads    int
	}{
		{"negotiated, json client", nil, "denied", "application/json", true, 1},
		{"negotiated, text client", nil, "denied", "text/html", false, 1},
		{"text, json client", []Option{WithBodyFormat(TextBody)}, "denied", "application/json", false, 0},
		{"problem json, text client", []Option{WithBodyFormat(ProblemJSONBody)}, "denied", "text/html", true, 0},
		{"problem json, no Accept", []Option{WithBodyFormat(ProblemJSONBody)}, "denied", "", true, 0},
		{"text, key error", []Option{WithBodyFormat(TextBody), keyErr}, "key error", "application/json", false, 0},
		{"problem json, key error", []Option{WithBodyFormat(ProblemJSONBody), keyErr}, "key error", "", true, 0},
		{"text, fail closed", []Option{WithBodyFormat(TextBody), WithFailClosed()}, "fail closed", "application/json", false, 0},
		{"problem json, fail closed", []Option{WithBodyFormat(ProblemJSONBody), WithFailClosed()}, "fail closed", "", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &mapStore{}
			p, _ := newPolicy(t, st, core.GCRA, core.PerHour(1), nil, tt.format...)
			status := map[string]int{"denied": 429, "key error": 401, "fail closed": 503}[tt.answer]
			switch tt.answer {
			case "denied":
				_, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), newSetterWriter())
				must.True(t, next)
			case "fail closed":
				st.fail = errors.New("store down")
			}
			r := &acceptCounter{Request: fakereq.New("192.0.2.1:1")}
			if tt.accept != "" {
				r.Request = fakereq.New("192.0.2.1:1", "Accept", tt.accept)
			}
			w := newSetterWriter()
			_, next := p.Handle(context.Background(), r, w)
			must.False(t, next)
			expect.Equal(t, status, w.status)
			if tt.wantJSON {
				expect.Equal(t, ContentTypeProblemJSON, w.headers["Content-Type"])
				expect.Contains(t, string(w.body), `"status":`)
			} else {
				expect.Equal(t, ContentTypeTextPlain, w.headers["Content-Type"])
				expect.NotContains(t, string(w.body), "{")
			}
			expect.Equal(t, tt.reads, r.reads, "reads of Accept")
		})
	}
}

// A HEAD request gets no body in a fixed format either, and the format is
// checked when the policy is built.
func TestWithBodyFormatHeadAndInvalid(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerHour(1), nil, WithBodyFormat(ProblemJSONBody))
	_, next := p.Handle(context.Background(), fakereq.New("192.0.2.1:1"), newSetterWriter())
	must.True(t, next)
	head := fakereq.New("192.0.2.1:1")
	head.MethodName = "HEAD"
	w := newSetterWriter()
	_, next = p.Handle(context.Background(), head, w)
	must.False(t, next)
	expect.Equal(t, 429, w.status)
	expect.Equal(t, ContentTypeProblemJSON, w.headers["Content-Type"])
	expect.Empty(t, w.body)

	_, err := New(p.Limiter(), WithBodyFormat(ProblemJSONBody+1))
	must.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Contains(t, err.Error(), "body format")
}
