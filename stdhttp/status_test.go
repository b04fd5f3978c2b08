package stdhttp

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// hijackRecorder is a recorder that can hand over its connection.
type hijackRecorder struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return nil, nil, nil
}

// The writer seen by a refunding policy's handler records the status the
// handler sent, and streams and hijacks as the server's writer does.
func TestStatusWriter(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 200},
		{"body only", func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }, 200},
		{"status", func(w http.ResponseWriter) { w.WriteHeader(404) }, 404},
		{"informational first", func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(500) }, 500},
		{"second status ignored", func(w http.ResponseWriter) { w.WriteHeader(201); w.WriteHeader(500) }, 201},
		{"flushed", func(w http.ResponseWriter) { must.NoError(t, http.NewResponseController(w).Flush()) }, 200},
		{"hijacked", func(w http.ResponseWriter) {
			_, _, err := w.(http.Hijacker).Hijack()
			must.NoError(t, err)
		}, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &hijackRecorder{ResponseRecorder: httptest.NewRecorder()}
			sw := &statusWriter{ResponseWriter: rec}
			tt.handler(sw)
			expect.Equal(t, tt.want, sw.Status())
			expect.Equal(t, rec, sw.Unwrap())
		})
	}
	sw := &statusWriter{ResponseWriter: httptest.NewRecorder()}
	_, _, err := sw.Hijack()
	expect.ErrorIs(t, err, http.ErrNotSupported)
}

// Only a refunding policy wraps the writer: the handler of any other sees
// the server's own.
func TestWriterIsWrappedOnlyForRefunds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opts    []httplimit.Option
		wrapped bool
	}{
		{"default", nil, false},
		{"refund", []httplimit.Option{httplimit.WithRefund(func(int) bool { return true })}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := memory.New(memory.WithSweepInterval(0))
			must.NoError(t, err)
			defer st.Close()
			lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5))
			must.NoError(t, err)
			mw, err := New(lim, tt.opts...)
			must.NoError(t, err)
			var seen http.ResponseWriter
			rec := httptest.NewRecorder()
			mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { seen = w })).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			_, isWrapped := seen.(*statusWriter)
			expect.Equal(t, tt.wrapped, isWrapped)
		})
	}
}

// An allowed request costs one allocation, the block of header values the
// Header map keeps, whatever the policy can do but was not asked to.
func TestAllowedRequestAllocations(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(1_000_000).WithBurst(1<<40))
	must.NoError(t, err)
	mw, err := New(lim)
	must.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r, w := httptest.NewRequest("GET", "/", nil), httptest.NewRecorder()
	expect.Equal(t, 1.0, testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) }))
}

// Under a policy counting only failures, the refund is settled as the
// handler's status goes out, whichever way it goes, so that the headers sent
// with it tell the quota after the refund; a failure's tell what it spent.
func TestRefundIsSettledAsTheStatusGoesOut(t *testing.T) {
	for _, tt := range []struct {
		name      string
		handler   func(w http.ResponseWriter)
		status    int
		remaining string
	}{
		{"status, then body", func(w http.ResponseWriter) { w.WriteHeader(201); _, _ = w.Write([]byte("x")) }, 201, "2"},
		{"body only", func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }, 200, "2"},
		{"flushed", func(w http.ResponseWriter) { must.NoError(t, http.NewResponseController(w).Flush()) }, 200, "2"},
		{"nothing written", func(http.ResponseWriter) {}, 200, "2"},
		{"informational, then success", func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(204) }, 204, "2"},
		{"informational, then failure", func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(401) }, 401, "1"},
		{"failure, then body", func(w http.ResponseWriter) { w.WriteHeader(500); _, _ = w.Write([]byte("x")) }, 500, "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := memory.New(memory.WithSweepInterval(0))
			must.NoError(t, err)
			defer st.Close()
			clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
			must.NoError(t, err)
			mw, err := New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
			must.NoError(t, err)
			srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tt.handler(w) })))
			defer srv.Close()
			res, err := srv.Client().Get(srv.URL)
			must.NoError(t, err)
			must.NoError(t, res.Body.Close())
			expect.Equal(t, tt.status, res.StatusCode)
			expect.Equal(t, tt.remaining, res.Header.Get(httplimit.HeaderXRateLimitRemain))
			expect.Contains(t, res.Header.Get(httplimit.HeaderRateLimit), ";r="+tt.remaining+";")
		})
	}
}
