package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// newExamplePolicy returns a policy of rate requests a minute per client
// address on st, named name.
func newExamplePolicy(st core.Store, clk core.Clock, name string, rate int64) *httplimit.Policy {
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(rate).Named(name),
		core.WithClock(clk), core.WithNamespace(name))
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim, httplimit.WithHeaders(httplimit.IETFHeaders))
	if err != nil {
		panic(err)
	}
	return p
}

// A Group applies every one of its policies to each request: here a wide
// limit and a tight one, the tight one denying the third request.
func ExampleGroup() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	g, err := httplimit.NewGroup(newExamplePolicy(st, clk, "wide", 100), newExamplePolicy(st, clk, "tight", 2))
	if err != nil {
		panic(err)
	}
	for range 3 {
		w := httptest.NewRecorder()
		_, next := g.Handle(context.Background(), stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil)), w)
		fmt.Println(next, w.Code, w.Header().Get("Ratelimit"))
	}
	// Output:
	// true 200 "wide";r=99;t=60, "tight";r=1;t=60
	// true 200 "wide";r=98;t=60, "tight";r=0;t=60
	// false 429 "tight";r=0;t=60
}

// HandleAll runs the policies a caller chose for one request, as a Group
// runs all of its own: here a login limit applies to /login only, a site
// limit to every path.
func ExampleHandleAll() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	login, site := newExamplePolicy(st, clk, "login", 1), newExamplePolicy(st, clk, "site", 100)
	for _, path := range []string{"/login", "/home", "/login"} {
		chosen := []*httplimit.Policy{site}
		if strings.HasPrefix(path, "/login") {
			chosen = append(chosen, login)
		}
		w := httptest.NewRecorder()
		r := stdhttp.View(httptest.NewRequest(http.MethodGet, path, nil))
		_, next := httplimit.HandleAll(context.Background(), r, w, chosen)
		fmt.Println(path, next, w.Header().Get("Ratelimit-Policy"))
	}
	// Output:
	// /login true "site";q=100;w=60, "login";q=1;w=60
	// /home true "site";q=100;w=60
	// /login false "site";q=100;w=60, "login";q=1;w=60
}
