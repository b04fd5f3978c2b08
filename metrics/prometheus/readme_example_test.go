package prommetrics_test

// The README's lines, line for line, so that they compile and run with every
// change to the API.

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The observer and the memory store's metrics, served at /metrics outside
// the limiter.
func Example_readme() {
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(100))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()

	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg) // go get github.com/ratewarden/ratewarden/metrics/prometheus
	if err != nil {
		log.Fatal(err)
	}
	if _, err := prommetrics.RegisterMemoryStore(reg, store); err != nil { // keys held, evictions
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) // outside the limiter

	mux.Handle("/", mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, `ratewarden_decisions_total{outcome="allowed"`) || strings.HasPrefix(line, "ratewarden_memory_store_keys ") {
			fmt.Print(line)
		}
	}
	// Output:
	// ratewarden_decisions_total{outcome="allowed",policy="default"} 1
	// ratewarden_memory_store_keys 1
}
