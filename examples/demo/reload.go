package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The reload step: a rules file whose one policy limits /api per client IP,
// edited while the server runs.
const (
	reloadRequests = 8
	reloadWait     = 10 * time.Second
	rulesTemplate  = `schema: 1
version: %d
policies:
  - name: api
    match: {prefixes: [/api]}
    key: ip
    limits: [%s]
`
)

// reloadDemo writes a rules file to a temporary folder and serves it through
// the net/http middleware with rules.WatchFile. It sends a burst, edits the
// file (a new version with a higher limit), waits for the reload hook to hear
// of it, and sends the burst again: the new limit takes effect without a
// restart, and what the client used under the old one stays used (3 of the
// new 6 are left). It prints RateLimit-Policy before and after.
func reloadDemo(out io.Writer) error {
	dir, err := os.MkdirTemp("", "ratewarden-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.yaml")
	if err := saveRules(path, 1, "3/m"); err != nil {
		return err
	}
	url, reloads, stop, err := serveRules(path)
	if err != nil {
		return err
	}
	defer stop()

	fmt.Fprintf(out, "\nrules from a file, edited while the server runs (rules.WatchFile):\n\n")
	fmt.Fprintf(out, "%s, version 1: policy api, limits: [3/m] per client IP on /api\n", path)
	if err := printBurst(out, url); err != nil {
		return err
	}
	start := time.Now()
	if err := saveRules(path, 2, "6/m"); err != nil {
		return err
	}
	r, err := waitReload(reloads)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthe file saved as version 2 with limits: [6/m]; the reload hook heard: %s version %d loaded (%s after the save), no restart\n",
		filepath.Base(r.Source), r.Version, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(out, "the 3 requests this client spent under 3/m stay spent: 3 of the 6 are left\n")
	return printBurst(out, url)
}

// saveRules writes the rules file at version with limit, as an editor saves:
// a new file renamed over the old one.
func saveRules(path string, version int, limit string) error {
	if err := os.WriteFile(path+".new", fmt.Appendf(nil, rulesTemplate, version, limit), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".new", path)
}

// serveRules loads the rules file at path into a rule set (in-memory
// store), watches it, and serves an app behind stdhttp.Middleware of the set
// on a free loopback port. It returns the app's URL, the reloads the hook
// hears after the first load, and the function that stops it all.
func serveRules(path string) (url string, reloads <-chan rules.Reload, stop func(), err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", nil, nil, err
	}
	doc, err := rules.Parse(raw, path)
	if err != nil {
		return "", nil, nil, err
	}
	store, err := memory.New()
	if err != nil {
		return "", nil, nil, err
	}
	heard := make(chan rules.Reload, 4)
	set, err := rules.New(store, doc,
		rules.WithReloadHook(func(r rules.Reload) { heard <- r }),
		rules.WithLogger(slog.New(slog.DiscardHandler))) // the hook says what happened
	if err != nil {
		store.Close()
		return "", nil, nil, err
	}
	watcher, err := rules.WatchFile(set, path)
	if err != nil {
		store.Close()
		return "", nil, nil, err
	}
	<-heard // WatchFile's first load, of the version the set was built with
	mw, err := stdhttp.Middleware(set)
	if err != nil {
		watcher.Close()
		store.Close()
		return "", nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		watcher.Close()
		store.Close()
		return "", nil, nil, err
	}
	items := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "items") })
	srv := &http.Server{Handler: mw(items), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/api/items", heard, func() {
		srv.Close()
		watcher.Close()
		store.Close()
	}, nil
}

// waitReload returns the next reload the hook hears, or an error when none
// comes in reloadWait or the file was refused.
func waitReload(reloads <-chan rules.Reload) (rules.Reload, error) {
	select {
	case r := <-reloads:
		if r.Err != nil {
			return r, fmt.Errorf("the edited rules were refused: %w", r.Err)
		}
		return r, nil
	case <-time.After(reloadWait):
		return rules.Reload{}, fmt.Errorf("the rules file was not reloaded within %s", reloadWait)
	}
}

// printBurst sends reloadRequests requests to url one after the other and
// prints their statuses and the RateLimit-Policy they carried.
func printBurst(out io.Writer, url string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	statuses := make([]string, 0, reloadRequests)
	policy, admitted := "-", 0
	for i := range reloadRequests {
		resp, err := client.Get(url)
		if err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, fmt.Sprint(resp.StatusCode))
		if resp.StatusCode == http.StatusOK {
			admitted++
		}
		policy = headerOrDash(resp.Header, "RateLimit-Policy")
	}
	fmt.Fprintf(out, "%d requests to %s: %s\nadmitted %d of %d; RateLimit-Policy: %s\n",
		reloadRequests, url, strings.Join(statuses, " "), admitted, reloadRequests, policy)
	return nil
}
