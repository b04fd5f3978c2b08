package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// client is a core.HTTPRequest for the example: a GET from one address. The
// adapters (stdhttp, ginmw, echomw, fibermw) provide the real ones.
type client string

func (c client) RemoteAddr() string         { return string(c) }
func (client) Header(string) string         { return "" }
func (client) HeaderValues(string) []string { return nil }
func (client) Method() string               { return "GET" }
func (client) Path() string                 { return "/" }
func (client) Route() string                { return "" }

// The policy says what an adapter does with each request, and with which
// headers: here two requests a minute per client address, the third refused.
func ExampleHTTPPolicy() {
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
	byAddress := func(r core.HTTPRequest) (string, error) { return r.RemoteAddr(), nil }
	p, err := core.NewHTTPPolicy(lim, core.WithKeyFunc(byAddress), core.WithHeaders(core.IETFHeaders))
	if err != nil {
		panic(err)
	}
	for range 3 {
		o := p.Decide(context.Background(), client("192.0.2.1"))
		if o.Action == core.HTTPPass {
			fmt.Println("pass")
		} else {
			resp := o.Response
			fmt.Println(resp.Status, resp.ContentType, string(resp.Body[:len(resp.Body)-1]))
		}
		for i := range o.NumHeaders() {
			name, values := o.Header(i)
			fmt.Printf("  %s: %s\n", name, values[0])
		}
		clk.Advance(10 * time.Second)
	}
	// Output:
	// pass
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=1;t=60
	// pass
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=0;t=50
	// 429 text/plain; charset=utf-8 Too Many Requests
	//   Retry-After: 40
	//   Ratelimit-Policy: "default";q=2;w=60
	//   Ratelimit: "default";r=0;t=40
}
