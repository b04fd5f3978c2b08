package prommetrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
)

// Given to a rules.Set (rules.WithObserver(obs)), the observer hears of every
// document that takes effect, and exports its version, labelled with its
// short digest: one series, replaced on every reload.
func ExampleObserver_ObserveRules() {
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	if err != nil {
		panic(err)
	}
	obs.ObserveRules(7, "3f2a9c1b7e04d8a1c6f95b2e0d7a4c3b9e8f1a2b3c4d5e6f708192a3b4c5d6e7") // what a Set calls
	obs.ObserveRules(8, "9b9ee9f885b80dffd2ff0e6f0971c83da8f23cc4f454423c6a86d77ebb4885d1") // a reload
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratewarden_rules_version") {
			fmt.Println(line)
		}
	}
	// Output: ratewarden_rules_version{digest="9b9ee9f885b8"} 8
}
