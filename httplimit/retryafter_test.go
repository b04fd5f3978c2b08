package httplimit

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// Retry-After counts whole seconds rounded up: a client told "1" when it must
// wait 1.001 s comes back too early and is denied again. Each wait is what is
// left of 2 s after the clock moved on, so none of them is a whole number but
// the last; rounding down or to the nearest fails at least one row.
func TestRetryAfterRoundsUp(t *testing.T) {
	for _, tt := range []struct {
		name    string
		elapsed time.Duration // since the admitted request; 2 s - elapsed is the wait
		want    string
	}{
		{"1.001 s", 999 * time.Millisecond, "2"},
		{"1.4 s", 600 * time.Millisecond, "2"},
		{"1.5 s", 500 * time.Millisecond, "2"},
		{"exactly 2 s", 0, "2"},
		{"0.999 s", 1001 * time.Millisecond, "1"},
		{"1 ns", 2*time.Second - 1, "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, clk := newPolicy(t, &mapStore{}, core.GCRA, core.Every(1, 2*time.Second), nil)
			_, next := p.Handle(context.Background(), get("192.0.2.1"), httptest.NewRecorder())
			must.True(t, next)
			clk.Advance(tt.elapsed)
			for _, w := range []ResponseWriter{httptest.NewRecorder(), newSetterWriter()} {
				_, next = p.Handle(context.Background(), get("192.0.2.1"), w)
				must.False(t, next)
				h := writtenHeaders(w)
				expect.Equal(t, tt.want, h[HeaderRetryAfter])
				expect.Equal(t, tt.want, h[HeaderXRateLimitReset], "the reset is Retry-After on a denial")
				expect.Equal(t, `"default";r=0;t=`+tt.want, h[HeaderRateLimit])
			}
		})
	}
}

// A fail-closed 503 says when to come back (RFC 9110 allows Retry-After on a
// 503): one second by default, WithUnavailableRetryAfter's rounded up
// otherwise, through both kinds of writer and to HEAD. It carries no
// rate-limit header: nothing was decided.
func TestFailClosedRetryAfter(t *testing.T) {
	boom := errors.New("store down")
	for _, tt := range []struct {
		name string
		opts []Option
		want string
	}{
		{"default", nil, "1"},
		{"10 s", []Option{WithUnavailableRetryAfter(10 * time.Second)}, "10"},
		{"2.5 s rounds up", []Option{WithUnavailableRetryAfter(2500 * time.Millisecond)}, "3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &mapStore{fail: boom}, core.GCRA, core.PerMinute(1), nil,
				append([]Option{WithFailClosed(), WithLogger(slog.New(slog.DiscardHandler))}, tt.opts...)...)
			for _, method := range []string{"GET", "HEAD"} {
				for _, w := range []ResponseWriter{httptest.NewRecorder(), newSetterWriter()} {
					r := get("192.0.2.1")
					r.method = method
					_, next := p.Handle(context.Background(), r, w)
					must.False(t, next)
					expect.Equal(t, 503, writtenStatus(w))
					expect.Equal(t, map[string]string{HeaderRetryAfter: tt.want, "Content-Type": ContentTypeTextPlain}, writtenHeaders(w), method)
				}
			}
		})
	}
}

// A 503 that asks for no wait, or a negative one, is refused when the policy
// is built.
func TestUnavailableRetryAfterRejectsNonPositive(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	for _, d := range []time.Duration{0, -time.Nanosecond, -time.Hour} {
		p, err := New(lim, WithUnavailableRetryAfter(d))
		must.ErrorIs(t, err, core.ErrInvalidOption, "%s", d)
		expect.ErrorContains(t, err, "Retry-After must be positive")
		expect.Nil(t, p)
	}
}

// writtenHeaders returns the headers written to a recorder or a setterWriter,
// one value each.
func writtenHeaders(w ResponseWriter) map[string]string {
	out := map[string]string{}
	switch w := w.(type) {
	case *httptest.ResponseRecorder:
		for name, vs := range w.Header() {
			out[name] = vs[0]
		}
	case *setterWriter:
		for name, v := range w.headers {
			out[name] = v
		}
	}
	return out
}

// writtenStatus returns the status written to a recorder or a setterWriter.
func writtenStatus(w ResponseWriter) int {
	switch w := w.(type) {
	case *httptest.ResponseRecorder:
		return w.Code
	case *setterWriter:
		return w.status
	}
	return 0
}
