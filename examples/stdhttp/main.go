// Command stdhttp is a net/http server behind ratewarden's middleware:
//
//	go run ./examples/stdhttp -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; POST /login answers 200 for the form field
// password=letmein and 401 for any other; GET /healthz, and GET /metrics
// under -metrics, are never limited. The flags are those of every example
// server (see examples/internal/flags and -h): -addr, -limit, -burst,
// -algorithm, -key, -jwt-secret, -trusted-proxies, -store, -fail, -dry-run,
// -metrics, -tier-claim, -tier, -count-only-failures.
package main

import (
	"fmt"
	"net/http"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func main() {
	setup := flags.MustLoad("stdhttp")
	defer setup.Close()

	limit, err := stdhttp.New(setup.Limiter, setup.Options...)
	setup.Check(err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST "+flags.LoginPath, func(w http.ResponseWriter, r *http.Request) {
		status := flags.LoginStatus(r.PostFormValue("password"))
		w.WriteHeader(status)
		fmt.Fprintln(w, http.StatusText(status))
	})
	mux.HandleFunc("GET "+flags.HealthPath, func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "healthy") })
	if setup.Metrics != nil {
		mux.Handle("GET "+flags.MetricsPath, setup.Metrics)
	}
	srv := &http.Server{Handler: limit(mux)}
	setup.Run(srv.Serve, srv.Shutdown)
}
