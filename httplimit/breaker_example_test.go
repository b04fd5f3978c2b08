package httplimit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// redisDown is a store that cannot decide, as a Redis that is not running.
type redisDown struct{}

func (redisDown) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	return core.Decision{}, errors.New("dial tcp 10.0.0.7:6379: connection refused")
}

// When the store is down, the limiter's circuit breaker (on by default:
// core.DefaultBreaker) opens after five failures in a row: the requests
// after them get the fail mode at once, without waiting for the store
// timeout, and a fail-closed 503 says in Retry-After when the breaker
// probes the store again (0.8 to 1 s the first time, then 1.6 to 2 s after a
// failed probe). The observer hears breaker_open.
func ExampleWithFailClosed_breaker() {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(redisDown{}, core.GCRA, core.PerSecond(10), core.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	obs := httplimit.ObserverFunc(func(e httplimit.Event) { fmt.Print(e.Outcome, " ") })
	mw, err := stdhttp.New(lim,
		httplimit.WithFailClosed(), // 503 at once while the breaker is open, Retry-After: the time to its next probe
		httplimit.WithObserver(obs),
		httplimit.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		log.Fatal(err)
	}
	h := mw(http.NotFoundHandler())
	send := func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Println(w.Code, "Retry-After:", w.Header().Get("Retry-After"))
	}
	for range 6 {
		send()
	}
	clock.Advance(time.Second)
	send() // the probe: the store is still down
	send()
	// Output:
	// failed_closed 503 Retry-After: 1
	// failed_closed 503 Retry-After: 1
	// failed_closed 503 Retry-After: 1
	// failed_closed 503 Retry-After: 1
	// failed_closed 503 Retry-After: 1
	// breaker_open 503 Retry-After: 1
	// failed_closed 503 Retry-After: 1
	// breaker_open 503 Retry-After: 2
}

// Store errors are logged through log/slog, at most one line per 10 s,
// whatever observers are set; WithoutStoreErrorLog turns those lines off
// when an observer already alerts on them.
func ExampleWithoutStoreErrorLog() {
	for _, quiet := range []bool{false, true} {
		var logged bytes.Buffer
		opts := []httplimit.Option{
			httplimit.WithObserver(httplimit.ObserverFunc(func(e httplimit.Event) {})),
			httplimit.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))),
		}
		if quiet {
			opts = append(opts, httplimit.WithoutStoreErrorLog()) // the observer alerts on outages; no log line about them
		}
		lim, err := core.NewLimiter(redisDown{}, core.GCRA, core.PerSecond(10))
		if err != nil {
			log.Fatal(err)
		}
		mw, err := stdhttp.New(lim, opts...)
		if err != nil {
			log.Fatal(err)
		}
		for range 100 {
			mw(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}
		fmt.Printf("WithoutStoreErrorLog %v: %d log lines\n", quiet, strings.Count(logged.String(), "\n"))
	}
	// Output:
	// WithoutStoreErrorLog false: 2 log lines
	// WithoutStoreErrorLog true: 0 log lines
}

// An observer that logs store errors itself: the policy's own throttled
// line stays on beside it.
func ExampleWithObserver_storeErrors() {
	lim, err := core.NewLimiter(redisDown{}, core.GCRA, core.PerSecond(10))
	if err != nil {
		log.Fatal(err)
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
	// rate limiter: dial tcp 10.0.0.7:6379: connection refused
	// ERROR ratewarden: rate limiter failed; requests get 503 (fail closed) policy=default err="dial tcp 10.0.0.7:6379: connection refused" suppressed=0
	// 503 Service Unavailable
}
