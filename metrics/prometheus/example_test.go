package prommetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The one-line use: an observer on the middleware, and the registry served
// at /metrics, outside the limit.
func ExampleNew() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	if err != nil {
		panic(err)
	}

	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello")
	})))

	for range 3 {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:4321"
		mux.ServeHTTP(httptest.NewRecorder(), req)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "ratewarden_decisions_total{outcome=\"allowed\"") ||
			strings.HasPrefix(line, "ratewarden_decisions_total{outcome=\"denied\"") {
			fmt.Print(line)
		}
	}
	// Output:
	// ratewarden_decisions_total{outcome="allowed",policy="default"} 2
	// ratewarden_decisions_total{outcome="denied",policy="default"} 1
}

// Every outcome of a policy is a series from its first decision on; a store
// error counts in store_errors_total too.
func ExampleObserver_Observe() {
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg, prommetrics.WithNamespace("shop"))
	if err != nil {
		panic(err)
	}
	obs.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedOpen, Policy: "checkout",
		StoreLatency: 100 * time.Millisecond, Err: core.ErrStoreClosed})

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if !strings.HasPrefix(line, "#") && !strings.Contains(line, "_bucket") && !strings.HasSuffix(line, " 0\n") {
			fmt.Print(line)
		}
	}
	// Output:
	// shop_decisions_total{outcome="failed_open",policy="checkout"} 1
	// shop_store_errors_total{policy="checkout"} 1
	// shop_store_latency_seconds_sum{policy="checkout"} 0.1
	// shop_store_latency_seconds_count{policy="checkout"} 1
}

// A memory store's keys and evictions, read at each scrape: here a store
// bounded to 3 keys sees 5 clients.
func ExampleRegisterMemoryStore() {
	st, err := memory.New(memory.WithMaxKeys(3), memory.WithShards(1))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	reg := prometheus.NewRegistry()
	if _, err := prommetrics.RegisterMemoryStore(reg, st); err != nil {
		panic(err)
	}

	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	for _, client := range []string{"a", "b", "c", "d", "e"} {
		if _, err := lim.Allow(context.Background(), client); err != nil {
			panic(err)
		}
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if !strings.HasPrefix(line, "#") {
			fmt.Print(line)
		}
	}
	// Output:
	// ratewarden_memory_store_evictions_total 2
	// ratewarden_memory_store_keys 3
}
