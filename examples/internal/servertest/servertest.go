package servertest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/rules"
)

// Start builds the example server of setup, as its main does, serves it on a
// loopback listener until the test ends, and returns its base URL
// ("http://127.0.0.1:PORT").
type Start func(t *testing.T, setup *flags.Setup) (url string)

// ServeHandler returns the Start of a server whose main builds an
// http.Handler (a ServeMux, a Gin engine, an Echo): it builds the handler
// with build, as main does, and serves it with httptest on a loopback
// listener until the test ends.
func ServeHandler[H http.Handler](build func(setup *flags.Setup) (H, error)) Start {
	return func(t *testing.T, setup *flags.Setup) string {
		h, err := build(setup)
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// reloadWait bounds the wait for a reload of the rules file: an event, not a
// time that passes (it ends as soon as the reload hook is called).
const reloadWait = 10 * time.Second

// Server is an example server under test.
type Server struct {
	URL string
	// Setup is the setup it was built from.
	Setup *flags.Setup
	// Log is its error log (stderr in a real run).
	Log *LockedBuffer
	// Reloads receives every reload of its rules, taken or refused.
	Reloads chan rules.Reload
	client  *http.Client
}

// StartServer parses args as the server's command line, builds the setup
// with its error log in Log and its reloads sent to Reloads, and starts the
// server.
func StartServer(t *testing.T, start Start, args ...string) *Server {
	t.Helper()
	c, err := flags.Parse("ex", args, io.Discard)
	require.NoError(t, err)
	s := &Server{Log: &LockedBuffer{}, Reloads: make(chan rules.Reload, 16), client: &http.Client{Timeout: 10 * time.Second}}
	c.ErrorLog = s.Log
	c.OnReload = func(r rules.Reload) { s.Reloads <- r }
	s.Setup, err = c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Setup.Close()) })
	s.URL = start(t, s.Setup)
	return s
}

// Response is what the client saw of one response.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends one request, with the headers given as name, value pairs, and
// returns the response.
func (s *Server) Do(t *testing.T, method, path string, headers ...string) Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.send(t, req)
}

// PostForm sends a form body to path and returns the response.
func (s *Server) PostForm(t *testing.T, path, form string) Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(form))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.send(t, req)
}

// send sends req and reads its response whole.
func (s *Server) send(t *testing.T, req *http.Request) Response {
	t.Helper()
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

// WaitReload waits for the next reload of the rules and returns it.
func (s *Server) WaitReload(t *testing.T) rules.Reload {
	t.Helper()
	select {
	case r := <-s.Reloads:
		return r
	case <-time.After(reloadWait):
		require.FailNow(t, "no reload of the rules", "within %s; the error log:\n%s", reloadWait, s.Log)
		return rules.Reload{}
	}
}

// rateLimitHeaders are the headers a limited request gets.
var rateLimitHeaders = []string{"RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}

// AssertNoRateLimitHeaders checks that r has none of the rate-limit headers:
// no policy decided on its request.
func AssertNoRateLimitHeaders(t assert.TestingT, r Response, msg string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	for _, name := range rateLimitHeaders {
		assert.Empty(t, r.Header.Values(name), "%s: header %s", msg, name)
	}
}

// CopyRules copies examples/rules.yaml (the test runs in a server's folder,
// beside it) to a temporary folder, where the test may edit it, and returns
// the copy's path.
func CopyRules(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", name))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	return path
}

// SaveFile writes raw to path as an editor saves: a new file renamed over
// the old one.
func SaveFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".new", raw, 0o644))
	require.NoError(t, os.Rename(path+".new", path))
}

// LockedBuffer is a bytes.Buffer safe for concurrent use: a server's error
// log, written by its goroutines while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
