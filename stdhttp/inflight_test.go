package stdhttp_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A handler that panics, and one that outlives a request timeout
// (http.TimeoutHandler), give their in-flight slot back when they end.
func TestInFlightReleasedOnPanicAndTimeout(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1000), core.WithInFlight(core.Concurrent(1)))
	must.NoError(t, err)
	mw, err := stdhttp.New(lim, httplimit.WithKey(func(keyfuncs.Request) (string, error) { return "one client", nil }))
	must.NoError(t, err)
	slow := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/panic", mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler bug") })))
	mux.Handle("/slow", http.TimeoutHandler(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-slow
	})), 20*time.Millisecond, "timed out"))
	mux.Handle("/", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic's log line
	srv.Start()
	defer srv.Close()

	for range 3 {
		_, err := srv.Client().Get(srv.URL + "/panic")
		expect.Error(t, err, "net/http drops the connection of a handler that panicked")
		waitNoSlot(t, lim)
	}
	resp, err := srv.Client().Get(srv.URL + "/slow")
	must.NoError(t, err)
	resp.Body.Close()
	expect.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	expect.Equal(t, int64(1), lim.SlotsHeld(), "the handler still runs")
	resp, err = srv.Client().Get(srv.URL + "/")
	must.NoError(t, err)
	resp.Body.Close()
	expect.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	expect.Equal(t, `"default";n=1`, resp.Header.Get(httplimit.HeaderConcurrencyLimit))
	close(slow)
	waitNoSlot(t, lim)
	resp, err = srv.Client().Get(srv.URL + "/")
	must.NoError(t, err)
	resp.Body.Close()
	expect.Equal(t, http.StatusOK, resp.StatusCode)
}

// waitNoSlot waits until lim holds no slot: the handler's goroutine releases
// it as it ends.
func waitNoSlot(t *testing.T, lim *core.Limiter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for lim.SlotsHeld() != 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	must.Zero(t, lim.SlotsHeld())
}
