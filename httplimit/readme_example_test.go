package httplimit_test

// The README's snippet of an adapter, line for line, so that it compiles and
// runs with every change to the API.

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// An adapter is a request view and one call to Handle per request, which
// answers the request itself when it must not go on.
func ExamplePolicy_Handle_adapter() {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })

	p := httplimit.MustPerIP("10/m") // or httplimit.New(lim, opts...)
	limited := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pass, next := p.Handle(r.Context(), stdhttp.View(r), w); next {
			app.ServeHTTP(w, r.WithContext(pass.Context()))
		}
	})

	for i := range 11 {
		rec := httptest.NewRecorder()
		limited.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if i == 0 || i >= 9 {
			fmt.Print(i+1, ": ", rec.Code, " ", rec.Header().Get("X-Ratelimit-Remaining"), " ", rec.Body.String())
		}
	}
	// Output:
	// 1: 200 9 ok
	// 10: 200 0 ok
	// 11: 429 0 Too Many Requests
}
