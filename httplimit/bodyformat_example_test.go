package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// WithBodyFormat answers every client in one format, whatever its Accept
// says: here plain text, as most frameworks' own limiters do, with
// Retry-After as the only field.
func ExampleWithBodyFormat() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(1))
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim, httplimit.WithHeaders(0), httplimit.WithBodyFormat(httplimit.TextBody))
	if err != nil {
		panic(err)
	}
	for range 2 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept", "application/json")
		w := httptest.NewRecorder()
		_, next := p.Handle(context.Background(), stdhttp.View(req), w)
		fmt.Printf("%v %d %q %q\n", next, w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	// Output:
	// true 200 "" ""
	// false 429 "text/plain; charset=utf-8" "Too Many Requests\n"
}
