package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// At most 2 requests of a client running at once, beside 100 a minute: a
// third while two run gets 429, Retry-After: 1 and X-Concurrency-Limit
// naming the policy; the slot comes back when a handler returns.
func ExamplePass_Release() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100), core.WithInFlight(core.Concurrent(2)))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim)
	if err != nil {
		panic(err)
	}
	running, release := make(chan struct{}), make(chan struct{})
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			running <- struct{}{}
			<-release
		}
	}))
	get := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = "192.0.2.1:4321"
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec
	}
	done := make(chan struct{})
	for range 2 {
		go func() { get("/slow"); done <- struct{}{} }()
		<-running
	}
	rec := get("/")
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get(httplimit.HeaderConcurrencyLimit))
	close(release)
	<-done
	<-done
	fmt.Println(get("/").Code)
	// Output:
	// 429 1 "default";n=2
	// 200
}
