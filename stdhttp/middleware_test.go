package stdhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// Middleware runs a policy the app keeps, so that the app can reset a client
// through it; a nil policy is refused.
func TestMiddleware(t *testing.T) {
	_, err := stdhttp.Middleware(nil)
	must.ErrorIs(t, err, core.ErrInvalidOption)

	p := httplimit.MustPerIP("2/m")
	mw, err := stdhttp.Middleware(p)
	must.NoError(t, err)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	get := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil)) // from 192.0.2.1
		return rec.Code
	}
	expect.Equal(t, []int{200, 200, 429}, []int{get(), get(), get()})
	must.NoError(t, p.Reset(t.Context(), "192.0.2.1"))
	expect.Equal(t, 200, get(), "a reset client starts afresh")
}
