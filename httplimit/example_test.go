package httplimit_test

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

// An adapter hands each request to Handle once, and calls the next handler
// when it says so: here two requests a minute per client address, the third
// refused with 429 and its headers.
func ExamplePolicy_Handle() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim, httplimit.WithHeaders(httplimit.IETFHeaders))
	if err != nil {
		panic(err)
	}
	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/", nil) // from 192.0.2.1
		w := httptest.NewRecorder()
		if _, next := p.Handle(context.Background(), stdhttp.View(r), w); next {
			fmt.Println("next handler")
		} else {
			fmt.Print(w.Code, " ", w.Body.String())
		}
		for _, name := range []string{"Retry-After", "Ratelimit-Policy", "Ratelimit"} {
			if v := w.Header().Get(name); v != "" {
				fmt.Printf("  %s: %s\n", name, v)
			}
		}
		clk.Advance(10 * time.Second)
	}
	// Output:
	// next handler
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=1;t=60
	// next handler
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=0;t=50
	// 429 Too Many Requests
	//   Retry-After: 40
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=0;t=40
}

// WithKey names who the client is; package keyfuncs builds key functions, and
// a request without the API key gets 401.
func ExampleWithKey() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(10))
	if err != nil {
		panic(err)
	}
	apiKey, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim, httplimit.WithKey(apiKey))
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	_, next := p.Handle(context.Background(), stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil)), w)
	fmt.Println(next, w.Code)
	// Output: false 401
}
