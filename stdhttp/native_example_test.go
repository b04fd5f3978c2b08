package stdhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// exampleLimiter allows one request a minute per key, on a memory store and
// a clock that stands still.
func exampleLimiter() *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	if err != nil {
		panic(err)
	}
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	return lim
}

// send serves GET / from 192.0.2.1 with header pairs kv and prints the
// status and body.
func send(h http.Handler, kv ...string) {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "192.0.2.1:1234"
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
}

type roleKey struct{}

// A skip that reads the *http.Request: requests that the authentication
// middleware marked as an admin's are not limited.
func ExampleNative() {
	mw, err := stdhttp.New(exampleLimiter(), httplimit.WithSkip(func(r keyfuncs.Request) bool {
		req, ok := stdhttp.Native(r)
		return ok && req.Context().Value(roleKey{}) == "admin"
	}))
	if err != nil {
		panic(err)
	}
	app := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") }))
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // stands for real authentication
		ctx := context.WithValue(r.Context(), roleKey{}, r.Header.Get("X-Role"))
		app.ServeHTTP(w, r.WithContext(ctx))
	})

	send(auth, "X-Role", "admin")
	send(auth, "X-Role", "admin")
	send(auth)
	send(auth)
	// Output:
	// 200 hello
	// 200 hello
	// 200 hello
	// 429 Too Many Requests
}

// userKey is the context key the authentication middleware stores the user
// under.
type userKey struct{}

// Key by the signed-in user, which the authentication middleware stored in
// the request's context before the limiter runs.
func Example_contextValue() {
	user, err := keyfuncs.ContextValue(userKey{})
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(exampleLimiter(), httplimit.WithKey(user))
	if err != nil {
		panic(err)
	}
	app := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") }))
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-User"); u != "" { // stands for real authentication
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
		}
		app.ServeHTTP(w, r)
	})

	send(auth, "X-User", "alice")
	send(auth, "X-User", "alice")
	send(auth, "X-User", "bob")
	send(auth)
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
	// 401 Unauthorized
}
