package stdhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := stdhttp.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	return adaptertest.NetHTTPApp(mw, h), nil
}

// middlewareApp is newApp around stdhttp.Middleware(h), for the
// conformance cases that run a Group.
func middlewareApp(_ *testing.T, h httplimit.Handler, app adaptertest.Handler) (*adaptertest.Server, error) {
	mw, err := stdhttp.Middleware(h)
	if err != nil {
		return nil, err
	}
	return adaptertest.NetHTTPApp(mw, app), nil
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Middleware: middlewareApp, Disconnects: true, RenderJSON: renderJSON})
}

// renderJSON renders through net/http's own means: an encoder on the
// http.ResponseWriter the denied handler gets.
func renderJSON(w httplimit.ResponseWriter, _ keyfuncs.Request, status int, body any) {
	rw := w.(http.ResponseWriter)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(body)
}

// The one-line form limits per client IP and refuses a malformed literal at
// once.
func TestPerIP(t *testing.T) {
	h := stdhttp.PerIP("2/m")(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes = append(codes, rec.Code)
	}
	expect.Equal(t, []int{200, 200, 429}, codes)
	expect.Panics(t, func() { stdhttp.PerIP("2 per minute") })
}
