package adaptertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// UserHeader is the request header whose value the app of a RequestAdapter
// stores as the signed-in user, before the middleware runs, as authentication
// middleware would.
const UserHeader = "X-Test-User"

// RequestAdapter is the adapter under test by RunRequest: the request's
// context and the framework's own request, seen from key functions, over real
// connections (TCP and a unix socket).
type RequestAdapter struct {
	// Key is the key the app stores the user under: "user" for Gin and Echo
	// (c.Set) and Fiber (c.Locals), a key of its own type for net/http
	// (context.WithValue).
	Key any
	// Serve builds an app as Adapter.New does (the same routes, each
	// answering through h), with one more step before the middleware: when
	// the request has UserHeader, its value is stored under Key the
	// framework's way. It serves the app on ln until the test ends, and
	// returns the adapter constructor's error.
	Serve func(t *testing.T, ln net.Listener, lim *core.Limiter, h Handler, opts ...httplimit.Option) error
	// NativePath reads the request path through the adapter's Native
	// accessor (the framework's own request), with Native's ok.
	NativePath func(r keyfuncs.Request) (string, bool)
}

// KeyRecorder wraps a key function and keeps what it saw last, for tests
// that check a key function inside a real server. It is safe for concurrent
// use.
type KeyRecorder struct {
	mu     sync.Mutex
	key    string
	err    error
	remote string
}

// Wrap returns f, recording its key, its error and the request's RemoteAddr.
func (k *KeyRecorder) Wrap(f keyfuncs.Func) keyfuncs.Func {
	return func(r keyfuncs.Request) (string, error) {
		key, err := f(r)
		k.mu.Lock()
		k.key, k.err, k.remote = key, err, r.RemoteAddr()
		k.mu.Unlock()
		return key, err
	}
}

// Last returns the last key, RemoteAddr and error the wrapped function saw.
func (k *KeyRecorder) Last() (key, remote string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.key, k.remote, k.err
}

// RunRequest runs the request-access checks against a.
func RunRequest(t *testing.T, a RequestAdapter) {
	for _, c := range []struct {
		name  string
		check func(t *testing.T, a RequestAdapter)
	}{
		{"context value keys by the signed-in user", checkContextValueKeysByUser},
		{"native gives the framework's request", checkNativeGivesTheFrameworksRequest},
		{"a unix-socket peer is not an IP", checkUnixSocketPeerIsNotAnIP},
		{"a trusted unix socket forwards the client", checkTrustedUnixSocketForwardsTheClient},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, a) })
	}
}

// Client sends requests to an app served on a listener of Listen.
type Client struct {
	t    *testing.T
	http *http.Client
	base string
}

// Listen returns a listener for an app under test, on a loopback TCP port
// or, when unix is true, on a unix socket in a fresh directory (short, as
// socket paths must be), and a Client that reaches it. Both are closed when
// the test ends.
func Listen(t *testing.T, unix bool) (net.Listener, *Client) {
	t.Helper()
	if !unix {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		return ln, &Client{t: t, http: &http.Client{Transport: tr}, base: "http://" + ln.Addr().String()}
	}
	dir, err := os.MkdirTemp("", "rw")
	must.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "app.sock")
	ln, err := net.Listen("unix", path)
	must.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return ln, &Client{t: t, http: &http.Client{Transport: tr}, base: "http://app.sock"}
}

// ServeHTTP serves h on ln with a net/http server until the test ends.
func ServeHTTP(t *testing.T, ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
}

// serve serves a's app on a listener of Listen.
func serve(t *testing.T, a RequestAdapter, unix bool, lim *core.Limiter, opts ...httplimit.Option) *Client {
	ln, c := Listen(t, unix)
	must.NoError(t, a.Serve(t, ln, lim, Body, opts...))
	return c
}

// Get sends GET path with header pairs kv and returns the status.
func (c *Client) Get(path string, kv ...string) int {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	must.NoError(c.t, err)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := c.http.Do(req)
	must.NoError(c.t, err)
	must.NoError(c.t, resp.Body.Close())
	return resp.StatusCode
}

// limiter returns a GCRA limiter of limit on a fresh memory store and a
// manual clock.
func limiter(t *testing.T, limit core.Limit) *core.Limiter {
	ms, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = ms.Close() })
	lim, err := core.NewLimiter(ms, core.GCRA, limit, core.WithClock(core.NewManualClock(t0)))
	must.NoError(t, err)
	return lim
}

func checkContextValueKeysByUser(t *testing.T, a RequestAdapter) {
	user, err := keyfuncs.ContextValue(a.Key)
	must.NoError(t, err)
	var rec KeyRecorder
	c := serve(t, a, false, limiter(t, core.PerMinute(1)), httplimit.WithKey(rec.Wrap(user)))
	expect.Equal(t, 200, c.Get("/", UserHeader, "alice"))
	key, _, err := rec.Last()
	expect.Equal(t, "alice", key)
	must.NoError(t, err)
	expect.Equal(t, 429, c.Get("/users/1", UserHeader, "alice"), "alice's quota is spent, whatever the route")
	expect.Equal(t, 200, c.Get("/", UserHeader, "bob"), "bob, from the same address, has his own")
	expect.Equal(t, 401, c.Get("/"), "no user is a key error")
	_, _, err = rec.Last()
	must.ErrorIs(t, err, keyfuncs.ErrKey)
	expect.Contains(t, err.Error(), "is missing or nil")
}

func checkNativeGivesTheFrameworksRequest(t *testing.T, a RequestAdapter) {
	_, ok := a.NativePath(fakereq.New("192.0.2.1:1"))
	expect.False(t, ok, "Native of a request view of another kind")
	errNoNative := errors.New("no native request")
	byPath := func(r keyfuncs.Request) (string, error) {
		p, ok := a.NativePath(r)
		if !ok {
			return "", errNoNative
		}
		return p, nil
	}
	var rec KeyRecorder
	c := serve(t, a, false, limiter(t, core.PerMinute(1)), httplimit.WithKey(rec.Wrap(byPath)))
	expect.Equal(t, 200, c.Get("/users/1"))
	key, _, err := rec.Last()
	must.NoError(t, err)
	expect.Equal(t, "/users/1", key)
	expect.Equal(t, 200, c.Get("/users/2"), "another path is another key")
	expect.Equal(t, 429, c.Get("/users/1"))
}

func checkUnixSocketPeerIsNotAnIP(t *testing.T, a RequestAdapter) {
	ip, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	var rec KeyRecorder
	c := serve(t, a, true, limiter(t, core.PerMinute(5)), httplimit.WithKey(rec.Wrap(ip)))
	expect.Equal(t, 500, c.Get("/", "X-Forwarded-For", "203.0.113.9"), "a server configuration error, not the client's")
	_, remote, err := rec.Last()
	must.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
	expect.Contains(t, err.Error(), `WithTrustedProxies("unix")`)
	expect.Contains(t, []string{"@", ""}, remote, "what a unix-socket peer looks like")
}

func checkTrustedUnixSocketForwardsTheClient(t *testing.T, a RequestAdapter) {
	ip, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(keyfuncs.TrustUnixSocket))
	must.NoError(t, err)
	var rec KeyRecorder
	c := serve(t, a, true, limiter(t, core.PerMinute(1)), httplimit.WithKey(rec.Wrap(ip)))
	expect.Equal(t, 200, c.Get("/", "X-Forwarded-For", "6.6.6.6, 203.0.113.9"))
	key, _, err := rec.Last()
	must.NoError(t, err)
	expect.Equal(t, "203.0.113.9", key, "the address nginx appended, not the client's own writing")
	expect.Equal(t, 429, c.Get("/", "X-Forwarded-For", "203.0.113.9"))
	expect.Equal(t, 200, c.Get("/", "X-Forwarded-For", "203.0.113.10"), "another client behind the same proxy")
	expect.Equal(t, 500, c.Get("/"), "the proxy named nobody")
	_, _, err = rec.Last()
	must.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
}
