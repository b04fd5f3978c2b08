// Command stdhttp is a net/http server behind ratewarden's middleware:
//
//	go run ./examples/stdhttp -limit 10/s -algorithm gcra
//	go run ./examples/stdhttp -rules examples/rules.yaml
//	curl -i localhost:8080/
//
// Without -rules, GET / answers 200 "ok"; POST /login answers 200 for the
// form field password=letmein and 401 for any other. With -rules (a file, or
// redis:// and redis-cluster:// for the rules kept in Redis), the rules
// document decides what is limited, and the server answers a small API:
// GET /, GET and POST /api/items, GET and DELETE /api/items/{id}, and
// POST /login (200 with the header X-Password: right). GET /healthz, and
// GET /metrics under -metrics, are never limited; anything else is 404. The
// limiter wraps the whole mux, so that the rules see every request. The flags
// are those of every example server (see examples/internal/flags and -h).
//
// newLimit holds the lines an app copies: the limiter on the store, the key,
// and stdhttp.New (or stdhttp.Middleware on the rules); examples/internal/flags
// parses and checks the flags, makes the store and the rules, and runs the
// server.
package main

import (
	"net/http"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func main() {
	setup := flags.MustLoad("stdhttp")
	defer setup.Close()

	h, err := newHandler(setup)
	setup.Check(err)
	srv := &http.Server{Handler: h}
	setup.Run(srv.Serve, srv.Shutdown)
}

// newLimit returns the net/http middleware that limits the requests as the
// flags say: with -rules, as the rules document says; otherwise with the
// algorithm and limit of -algorithm and -limit, per client as -key says.
func newLimit(setup *flags.Setup) (func(http.Handler) http.Handler, error) {
	if setup.Rules != nil {
		return stdhttp.Middleware(setup.Rules)
	}
	cfg := setup.Config
	// setup.Store is memory.New(), or redisstore.New on a go-redis client of
	// redisstore.ParseURL's options (-store redis://...).
	// cfg.LimiterOptions(): -concurrency's core.WithInFlight(core.Concurrent(N)),
	// -block-for's core.WithBlockFor(DURATION), -lease's core.WithTokenLease.
	lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
	if err != nil {
		return nil, err
	}
	// keyfuncs.IP(), keyfuncs.Header(name) or jwtkey.Subject(...).
	key, err := cfg.KeyFunc()
	if err != nil {
		return nil, err
	}
	// The other flags: -tier, -fail, -dry-run, -count-only-failures,
	// -settle-header, the error log, the metrics, and /healthz never limited;
	// setup keeps the policy for -metrics' gauges and to give leased tokens
	// back at shutdown.
	lim, opts, err := setup.Policy(lim)
	if err != nil {
		return nil, err
	}
	return stdhttp.New(lim, append(opts, httplimit.WithKey(key))...)
}

// newHandler returns the server's routes behind the limiter setup describes.
func newHandler(setup *flags.Setup) (http.Handler, error) {
	limit, err := newLimit(setup)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for _, route := range setup.Config.Routes() {
		mux.HandleFunc(route.MuxPattern(), func(w http.ResponseWriter, r *http.Request) {
			write(w, route.Answer(request{r}))
		})
	}
	if setup.Metrics != nil {
		mux.Handle("GET "+flags.MetricsPath, setup.Metrics)
	}
	// "/" takes every request no route takes, whatever its method, so that
	// the answer is 404 (not 405) as in the other servers.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { write(w, flags.NotFound()) })
	return limit(mux), nil
}

// write writes the reply as plain text.
func write(w http.ResponseWriter, reply flags.Reply) {
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(reply.Status)
	_, _ = w.Write([]byte(reply.Body))
}

// request is a route's view of an *http.Request.
type request struct{ r *http.Request }

func (q request) Header(name string) string    { return q.r.Header.Get(name) }
func (q request) FormValue(name string) string { return q.r.PostFormValue(name) }
func (q request) PathValue(name string) string { return q.r.PathValue(name) }
func (q request) Query(name string) string     { return q.r.URL.Query().Get(name) }
