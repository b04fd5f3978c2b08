// Command demo shows ratewarden at work in a second or two: it starts a
// net/http server behind the middleware (in-memory store) on a free loopback
// port, fires a burst of requests at it, and prints what the client saw: each
// request's status and rate-limit headers, the admitted rate, and the first
// 429 response in full. Then it shows rules changed without a restart: it
// writes a rules file to a temporary folder, serves it (rules.WatchFile), sends
// a burst, edits the file (version 2, a higher limit), waits for the reload
// hook, and sends the burst again, printing RateLimit-Policy before and after.
//
//	go run ./examples/demo
//	go run ./examples/demo -algorithm sliding-log -limit 10/s -n 30 -every 20ms
//	go run ./examples/demo -algorithm leaky-bucket   # admitted requests are held, not refused
//	go run ./examples/demo -json                     # the 429 body as problem details
//	go run ./examples/demo -reload=false             # the burst only, no rules file
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	alg    core.Algorithm
	limit  core.Limit
	n      int
	every  time.Duration
	json   bool
	reload bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	alg := fs.String("algorithm", "gcra", "token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window or gcra")
	limit := fs.String("limit", "5/s", "the limit, RATE/PERIOD: 5/s, 100/m, 5/30s")
	burst := fs.Int64("burst", 0, "the burst for token-bucket, leaky-bucket and gcra (0: the rate)")
	n := fs.Int("n", 20, "how many requests to send (1 to 1000)")
	every := fs.Duration("every", 50*time.Millisecond, "the time between two requests (0: all at once)")
	asJSON := fs.Bool("json", false, "ask for JSON (Accept: application/json): the 429 body is problem details")
	reload := fs.Bool("reload", true, "then edit a rules file while the server runs, and show the new limit take effect")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	var o options
	var err error
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *n < 1 || *n > 1000:
		return o, fmt.Errorf("-n must be from 1 to 1000, got %d", *n)
	case *every < 0 || *every > 10*time.Second:
		return o, fmt.Errorf("-every must be from 0 to 10s, got %s", *every)
	case *burst < 0:
		return o, fmt.Errorf("-burst must not be negative, got %d", *burst)
	}
	if o.alg, err = core.ParseAlgorithm(*alg); err != nil {
		return o, fmt.Errorf("-algorithm: %w", err)
	}
	if o.limit, err = core.ParseLimit(*limit); err != nil {
		return o, fmt.Errorf("-limit: %w", err)
	}
	if *burst > 0 {
		o.limit = o.limit.WithBurst(*burst)
	}
	if err := o.alg.ValidateLimit(o.limit); err != nil {
		return o, fmt.Errorf("-limit/-burst: %w", err)
	}
	o.n, o.every, o.json, o.reload = *n, *every, *asJSON, *reload
	return o, nil
}

// result is what the client saw for one request.
type result struct {
	sent, done time.Duration
	status     int
	header     http.Header
	body       string
	err        error
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}
	if err := demo(o, stdout); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	return 0
}

// demo starts the server, fires the burst at it and prints what the client
// saw.
func demo(o options, out io.Writer) error {
	url, stop, err := serve(o)
	if err != nil {
		return err
	}
	defer stop() // every response has been read by then

	fmt.Fprintf(out, "%s limited to %s; %d requests from one client, one every %s, to %s\n\n",
		o.alg, o.limit, o.n, o.every, url)
	results := fire(url, o)

	admitted, first429, err := printResults(out, results)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	printSummary(out, o, admitted)
	if first429 != nil {
		printResponse(out, first429)
	}
	if o.reload {
		return reloadDemo(out)
	}
	return nil
}

// serve starts a server behind the middleware (in-memory store) on a free
// loopback port, and returns its URL and the function that stops it.
func serve(o options) (url string, stop func(), err error) {
	// The library: a store, a limiter, the middleware.
	store, err := memory.New()
	if err != nil {
		return "", nil, err
	}
	lim, err := core.NewLimiter(store, o.alg, o.limit)
	if err != nil {
		store.Close()
		return "", nil, err
	}
	mw, err := stdhttp.New(lim)
	if err != nil {
		store.Close()
		return "", nil, err
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: mw(hello), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		srv.Close()
		store.Close()
	}
	return "http://" + ln.Addr().String() + "/", stop, nil
}

// printResults prints one line per request: its timing, status and
// rate-limit headers. It returns how many were admitted and the first 429,
// or the first request's error.
func printResults(out io.Writer, results []result) (admitted int, first429 *result, err error) {
	fmt.Fprintf(out, "%3s %7s %7s %6s %11s %17s %21s %17s  %-22s %s\n", "#", "sent", "done", "status",
		"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit")
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return admitted, first429, fmt.Errorf("request %d: %w", i+1, r.err)
		}
		if r.status == http.StatusOK {
			admitted++
		}
		if r.status == http.StatusTooManyRequests && first429 == nil {
			first429 = r
		}
		h := func(name string) string { return headerOrDash(r.header, name) }
		fmt.Fprintf(out, "%3d %7s %7s %6d %11s %17s %21s %17s  %-22s %s\n", i+1, ms(r.sent), ms(r.done), r.status,
			h("Retry-After"), h("X-RateLimit-Limit"), h("X-RateLimit-Remaining"), h("X-RateLimit-Reset"),
			h("RateLimit-Policy"), h("RateLimit"))
	}
	return admitted, first429, nil
}

// headerOrDash returns the named header's first value, or "-" when it has none.
func headerOrDash(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	return "-"
}

// printSummary prints the admitted rate against the offered rate and the
// limit.
func printSummary(out io.Writer, o options, admitted int) {
	if span := time.Duration(o.n) * o.every; span > 0 {
		fmt.Fprintf(out, "admitted %d of %d requests offered over %s: %.1f/s admitted of %.1f/s offered, against a limit of %s\n",
			admitted, o.n, span, float64(admitted)/span.Seconds(), float64(o.n)/span.Seconds(), o.limit)
	} else {
		fmt.Fprintf(out, "admitted %d of %d requests sent at once, against a limit of %s\n", admitted, o.n, o.limit)
	}
}

// printResponse prints the 429 r in full as the client saw it: status line,
// headers sorted by name (but Date) and body.
func printResponse(out io.Writer, r *result) {
	fmt.Fprintf(out, "\nthe first 429, as the client saw it:\n\n")
	fmt.Fprintf(out, "HTTP/1.1 %d %s\n", r.status, http.StatusText(r.status))
	names := make([]string, 0, len(r.header))
	for name := range r.header {
		if name != "Date" { // the only line that changes from run to run
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range r.header[name] {
			fmt.Fprintf(out, "%s: %s\n", name, v)
		}
	}
	fmt.Fprintf(out, "\n%s", r.body)
	if !strings.HasSuffix(r.body, "\n") {
		fmt.Fprintln(out)
	}
}

// fire sends o.n requests to url, request i at i*o.every, each on its own
// goroutine so that a request the leaky bucket holds does not hold the next.
func fire(url string, o options) []result {
	client := &http.Client{Timeout: 30 * time.Second}
	results := make([]result, o.n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range results {
		if wait := time.Until(start.Add(time.Duration(i) * o.every)); wait > 0 {
			time.Sleep(wait) // pacing the client's real requests, not moving a clock
		}
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			r.sent = time.Since(start)
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				r.err = err
				return
			}
			if o.json {
				req.Header.Set("Accept", "application/json")
			}
			resp, err := client.Do(req)
			if err != nil {
				r.err = err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			r.done, r.status, r.header, r.body, r.err = time.Since(start), resp.StatusCode, resp.Header, string(body), err
		}(&results[i])
	}
	wg.Wait()
	return results
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
