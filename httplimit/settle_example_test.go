package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// A refunded response's headers tell the quota after the refund: a
// successful login leaves the quota as it found it, a failed one shows what
// it spent.
func ExampleWithRefund_headers() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(3))
	defer stop()
	mw, err := stdhttp.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	if err != nil {
		panic(err)
	}
	login := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Basic good" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	for _, auth := range []string{"Basic good", "bad", "Basic good", "bad"} {
		w := get(login, "Authorization", auth)
		fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 3 "default";r=3;t=0
	// 401 2 "default";r=2;t=60
	// 200 2 "default";r=2;t=60
	// 401 1 "default";r=1;t=60
}

// An adapter settles a refunding request when its status is known and its
// headers are not yet sent, then finishes it once the handler returned.
func ExamplePass_Settle() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(3))
	defer stop()
	p, err := httplimit.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	pass, next := p.Handle(context.Background(), stdhttp.View(r), w)
	fmt.Println(next, pass.WantsStatus(), w.Header().Get("X-RateLimit-Remaining"))
	// The handler sends 200: settle before the headers go out.
	pass.Settle(http.StatusOK, w)
	w.WriteHeader(http.StatusOK)
	pass.Finish(http.StatusOK)
	fmt.Println(w.Header().Get("X-RateLimit-Remaining"))
	// Output:
	// true true 2
	// 3
}
