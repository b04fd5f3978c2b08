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

// limiter returns a limiter of limit on a fresh memory store, on a clock
// that stands still; stop closes the store.
func limiter(alg core.Algorithm, limit core.Limit) (lim *core.Limiter, stop func()) {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err = core.NewLimiter(st, alg, limit, core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	return lim, func() { _ = st.Close() }
}

// get sends GET / to h with the header pairs kv and returns the response.
func get(h http.Handler, kv ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/", nil) // from 192.0.2.1
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Set(kv[i], kv[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})

// An observer sees every decision with its outcome and the name of the limits
// that applied: count them, or use the metrics/prometheus and metrics/otel
// modules, which are observers.
func ExampleWithObserver() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(1))
	defer stop()
	seen := httplimit.ObserverFunc(func(e httplimit.Event) {
		fmt.Println(e.Outcome, e.Policy, e.Decision.Remaining)
	})
	mw, err := stdhttp.New(lim, httplimit.WithObserver(seen))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	get(h)
	get(h)
	// Output:
	// allowed default 0
	// denied default 0
}

// A dry run decides and reports every request but denies none: the headers
// tell the truth, and the observer hears of every would-be denial.
func ExampleWithDryRun() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(1))
	defer stop()
	wouldDeny := httplimit.ObserverFunc(func(e httplimit.Event) {
		if e.Outcome == httplimit.OutcomeDryRunDenied {
			fmt.Println("would deny")
		}
	})
	mw, err := stdhttp.New(lim, httplimit.WithDryRun(), httplimit.WithObserver(wouldDeny))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	for range 2 {
		w := get(h)
		fmt.Println(w.Code, w.Header().Get("Ratelimit"), w.Header().Get("Retry-After") == "")
	}
	// Output:
	// 200 "default";r=0;t=60 true
	// would deny
	// 200 "default";r=0;t=60 true
}

// Free clients get 1 request a minute, paid ones 100 a second: the X-Plan
// header picks the tier (it could be a JWT claim or a context value), and the
// headers name the tier that applied. A missing or unknown plan gets the
// policy's own limits.
func ExampleWithTiers() {
	lim, stop := limiter(core.GCRA, core.PerMinute(1))
	defer stop()
	paid, err := lim.Tier("paid", core.PerSecond(100))
	if err != nil {
		panic(err)
	}
	plan, err := keyfuncs.Header("X-Plan")
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithTiers(plan, paid))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	for _, p := range []string{"paid", "", "gold"} {
		w := get(h, "X-Plan", p)
		fmt.Println(w.Code, w.Header().Get("Ratelimit-Policy"))
	}
	// Output:
	// 200 "paid";q=100;w=1
	// 200 "default";q=1;w=60
	// 429 "default";q=1;w=60
}

// Counting only failed logins: a response below 400 gives its cost back, so
// three failures a minute are allowed, and any number of successes.
func ExampleWithRefund() {
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
	for _, auth := range []string{"Basic good", "Basic good", "Basic good", "Basic good", "bad", "bad", "bad", "Basic good"} {
		fmt.Print(get(login, "Authorization", auth).Code, " ")
	}
	fmt.Println()
	// Output: 200 200 200 200 401 401 401 429
}

// The default 429 body is a ProblemDetails: change one field and keep the
// rest, here for JSON clients only.
func ExampleDeniedProblem() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(1))
	defer stop()
	mw, err := stdhttp.New(lim, httplimit.WithResponder(func(r keyfuncs.Request, d core.Decision) httplimit.Response {
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "Upgrade to the paid plan for more."
		return pd.Response(r) // problem+json or plain text, as the client accepts
	}))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	get(h)
	w := get(h, "Accept", "application/json")
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Body.String())
	// Output:
	// 429 application/problem+json
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"Upgrade to the paid plan for more.","violated-policies":["default"]}
}

// A denied handler renders the 429 itself once the policy set the rate-limit
// headers: through the framework (ginmw.Native(r).JSON(...)), or here,
// under net/http, through the http.ResponseWriter.
func ExampleWithDeniedHandler() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(1))
	defer stop()
	mw, err := stdhttp.New(lim, httplimit.WithDeniedHandler(func(w httplimit.ResponseWriter, r keyfuncs.Request, d core.Decision) {
		rw := w.(http.ResponseWriter)
		rw.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(rw, "<p>Slow down: try again in %s.</p>", d.RetryAfter)
	}))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	get(h)
	w := get(h)
	fmt.Println(w.Code, w.Header().Get("Retry-After"), w.Body.String())
	// Output: 429 60 <p>Slow down: try again in 1m0s.</p>
}

// An operator unblocks a client: Reset takes the key exactly as the key
// function makes it, which the same function gives for a request from that
// client (here the client IP).
func ExamplePolicy_Reset() {
	lim, stop := limiter(core.FixedWindow, core.PerMinute(1))
	defer stop()
	p, err := httplimit.New(lim)
	if err != nil {
		panic(err)
	}
	ip, err := keyfuncs.IP()
	if err != nil {
		panic(err)
	}
	handle := func() int {
		w := httptest.NewRecorder()
		p.Handle(context.Background(), stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil)), w)
		return w.Code
	}
	fmt.Println(handle(), handle())

	key, err := ip(stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil)))
	if err != nil {
		panic(err)
	}
	if err := p.Reset(context.Background(), key); err != nil {
		panic(err)
	}
	fmt.Println(key, handle())
	// Output:
	// 200 429
	// 192.0.2.1 200
}

// An observer that may block (it writes to a network) goes behind
// NonBlocking: requests never wait for it, and what does not fit in its queue
// is dropped and counted.
func ExampleNonBlocking() {
	lim, stop := limiter(core.GCRA, core.PerMinute(10))
	defer stop()
	slow := httplimit.ObserverFunc(func(e httplimit.Event) { fmt.Println("sent", e.Outcome) })
	async, err := httplimit.NonBlocking(slow, 1024)
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(async))
	if err != nil {
		panic(err)
	}
	get(mw(ok))
	if err := async.Close(); err != nil { // at shutdown: delivers what is queued
		panic(err)
	}
	fmt.Println("dropped", async.Dropped())
	// Output:
	// sent allowed
	// dropped 0
}
