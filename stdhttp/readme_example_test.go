package stdhttp_test

// The README's net/http snippets, line for line, so that they compile (and,
// where no server is needed, run) with every change to the API.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line form: 100 requests a minute per client IP in front of a
// ServeMux. (It starts a server, so go test compiles it but does not run it.)
func ExamplePerIP() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	http.ListenAndServe(":8080", stdhttp.PerIP("100/m")(mux)) // 100 requests a minute per client IP; mux is any http.Handler
}

// PerIP takes a limit as core.ParseLimit reads it: two requests a minute per
// client, the third refused.
func ExamplePerIP_limit() {
	handler := stdhttp.PerIP("2/m")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	}))
	for range 3 {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil)) // from 192.0.2.1
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 ok
	// 200 ok
	// 429 Too Many Requests
}

// The full constructor: a limiter of your own (algorithm, limit, store), then
// the middleware. (It starts a server, so go test compiles it but does not
// run it.)
func ExampleNew_limiter() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })

	store, err := memory.New() // in-process and bounded; Close stops its sweeper
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(store, core.TokenBucket, core.PerSecond(10).WithBurst(20)) // or core.ParseLimit("10/s burst 20")
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim) // ginmw.New, echomw.New, echo5mw.New, fibermw.New, fiber3mw.New and grpcmw.New take the same arguments
	if err != nil {
		log.Fatal(err)
	}
	http.ListenAndServe(":8080", mw(mux))
}

// Every behaviour is an httplimit option of the same constructor: here the
// key is an API key, /healthz is never limited, and a failing store answers
// 503.
func ExampleNew_options() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(2))
	if err != nil {
		panic(err)
	}
	apiKey, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		panic(err)
	}

	mw, err := stdhttp.New(lim,
		httplimit.WithKey(apiKey), // who the client is (package keyfuncs; default: the client IP)
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }),
		httplimit.WithCost(func(r keyfuncs.Request) int64 { return 1 }),
		httplimit.WithFailClosed(),                      // 503 when the store fails (default: let requests through)
		httplimit.WithStoreTimeout(50*time.Millisecond), // per store call (default 100 ms)
	)
	if err != nil {
		log.Fatal(err)
	}

	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	for _, c := range []struct{ path, key string }{{"/healthz", ""}, {"/", ""}, {"/", "k-123"}} {
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		if c.key != "" {
			req.Header.Set("X-API-Key", c.key)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Printf("%s key=%q: %d %q remaining=%q\n", c.path, c.key, rec.Code, rec.Body.String(), rec.Header().Get("X-RateLimit-Remaining"))
	}
	// Output:
	// /healthz key="": 200 "ok\n" remaining=""
	// / key="": 401 "Unauthorized\n" remaining=""
	// / key="k-123": 200 "ok\n" remaining="1"
}

// Two limits on one request, and the decision read by the handler.
func ExampleDecisionFrom() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()

	lim, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10), core.WithLimit(core.PerHour(1000)))
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithDecisionInContext())
	if err != nil {
		log.Fatal(err)
	}
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := stdhttp.DecisionFrom(r) // or httplimit.DecisionFromContext(r.Context())
		fmt.Fprintf(w, "%d left under %v\n", d.Remaining, d.Limit)
	}))

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Print(rec.Body.String())
	fmt.Println(rec.Header().Get("RateLimit-Policy"))
	// Output:
	// 9 left under 10/s
	// "default";q=10;w=1, "1000/h";q=1000;w=3600
}

// down is a store that cannot decide, as a Redis that is not running.
type down struct{}

func (down) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	return core.Decision{}, errors.New("connection refused")
}

// When the store fails: the hook sees the error, the client only a 503.
func ExampleNew_failClosed() {
	lim, err := core.NewLimiter(down{}, core.GCRA, core.PerSecond(10))
	if err != nil {
		panic(err)
	}

	mw, err := stdhttp.New(lim,
		httplimit.WithFailClosed(), // 503; without it the request goes on, with no rate-limit headers
		httplimit.WithObserver(httplimit.ObserverFunc(func(e httplimit.Event) {
			if e.Err != nil {
				log.Printf("rate limiter: %v", e.Err) // also logged through slog, once per 10 s, unless httplimit.WithoutStoreErrorLog()
			}
		})),
	)
	if err != nil {
		log.Fatal(err)
	}

	flags := log.Flags()
	log.SetFlags(0)
	log.SetOutput(os.Stdout)
	defer func() { log.SetFlags(flags); log.SetOutput(os.Stderr) }()
	rec := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// rate limiter: connection refused
	// ERROR ratewarden: rate limiter failed; requests get 503 (fail closed) policy=default err="connection refused" suppressed=0
	// 503 Service Unavailable
}
