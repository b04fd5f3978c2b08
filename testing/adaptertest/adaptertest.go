package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// PeerHeader is the request header whose value the app under test must make
// the peer address (RemoteAddr) before the middleware runs, when present: it
// lets one test client act as many clients. SetPeer does it for net/http.
const PeerHeader = "X-Test-Peer"

// Handler is what every route of the app under test does: read the decision
// through the adapter's own accessor (DecisionFrom; the suite builds the
// middleware with httplimit.WithDecisionInContext unless it tests the default), pass it here, and answer
// with the returned string as the body, with Content-Type
// "text/plain; charset=utf-8", and the status Status gives for the request's
// StatusHeader (200 when absent).
type Handler func(d core.Decision, ok bool) string

// StatusHeader is the request header whose value, a status code, the app's
// handler answers with (see Status): it lets the suite test refunds that
// depend on the response's status.
const StatusHeader = "X-Test-Status"

// Status returns the status the handler answers with for a StatusHeader
// value: the code it holds, 200 when it is empty or not a code.
func Status(header string) int {
	if n, err := strconv.Atoi(header); err == nil && n >= 200 && n <= 599 {
		return n
	}
	return http.StatusOK
}

// Server is a running app under test.
type Server struct {
	// Do sends one request, whose URL path is the route to call, and returns
	// the response.
	Do func(r *http.Request) (*http.Response, error)
	// Close stops the app and waits for every request in flight; nil when
	// there is nothing to stop. It must not end requests in flight itself
	// (Fiber's Shutdown ends a held request's wait): the suite checks that
	// a request whose client hung up ends by itself.
	Close func()
}

// Adapter is the adapter under test.
type Adapter struct {
	// New builds an app whose routes all use the adapter's middleware, built
	// with lim and opts, and h (see Handler). The routes are GET, HEAD and POST
	// on "/", "/health" and "/users/<id>" (a route with a parameter, so that
	// keys can be per route). New returns the adapter constructor's error.
	New func(t *testing.T, lim *core.Limiter, h Handler, opts ...httplimit.Option) (*Server, error)
	// Disconnects reports whether a client can hang up while its request is
	// held (false when requests are not sent over a connection).
	Disconnects bool
	// RenderJSON writes status and body as JSON through the framework's own
	// renderer (Gin's and Echo's c.JSON, Fiber's c.Status(status).JSON, an
	// encoder on the http.ResponseWriter for net/http), from within an
	// httplimit.WithDeniedHandler: w and r are what the handler got (reach
	// the framework's request with the adapter's Native).
	RenderJSON func(w httplimit.ResponseWriter, r keyfuncs.Request, status int, body any)
	// Middleware builds the app New builds, around the adapter's
	// Middleware(h) instead of New: for RunRules, which hands it a rule set, and
	// for Run's Group cases.
	Middleware func(t *testing.T, h httplimit.Handler, app Handler) (*Server, error)
}

// SetPeer sets r.RemoteAddr from PeerHeader, for net/http based apps.
func SetPeer(r *http.Request) {
	if p := r.Header.Get(PeerHeader); p != "" {
		r.RemoteAddr = p
	}
}

// HTTPServer serves h on an httptest server and returns it as a Server.
func HTTPServer(h http.Handler) *Server {
	srv := httptest.NewServer(h)
	client := srv.Client()
	return &Server{
		Do: func(r *http.Request) (*http.Response, error) {
			r.URL.Scheme, r.URL.Host, r.Host = "http", srv.Listener.Addr().String(), ""
			return client.Do(r)
		},
		Close: srv.Close,
	}
}

// Body is what the apps' handlers answer, through Handler.
func Body(d core.Decision, ok bool) string {
	if !ok {
		return "ok, no decision"
	}
	return fmt.Sprintf("ok, remaining %d", d.Remaining)
}

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// env is one test's limiter, clock and app.
type env struct {
	t         *testing.T
	noContext bool // leave out httplimit.WithDecisionInContext
	// more, when set, gives options built from the limiter (tiers).
	more  func(lim *core.Limiter) []httplimit.Option
	clk   *core.ManualClock
	srv   *Server
	calls atomic.Int64
	// lim is the env's limiter; onCall, when set, runs in every handler
	// (inflight.go holds a request there).
	lim    *core.Limiter
	onCall func()
}

// start builds a limiter of alg and limit on a fresh memory store (or st) and
// an app with opts.
func start(t *testing.T, a Adapter, st core.Store, alg core.Algorithm, limit core.Limit, lopts []core.Option, opts ...httplimit.Option) *env {
	t.Helper()
	e := newEnv(t)
	e.run(a, st, alg, limit, lopts, opts...)
	return e
}

func newEnv(t *testing.T) *env { return &env{t: t, clk: core.NewManualClock(t0)} }

func (e *env) run(a Adapter, st core.Store, alg core.Algorithm, limit core.Limit, lopts []core.Option, opts ...httplimit.Option) {
	t := e.t
	t.Helper()
	if st == nil {
		ms, err := memory.New(memory.WithSweepInterval(0))
		must.NoError(t, err)
		t.Cleanup(func() { _ = ms.Close() })
		st = ms
	}
	lim, err := core.NewLimiter(st, alg, limit, append([]core.Option{core.WithClock(e.clk)}, lopts...)...)
	must.NoError(t, err)
	opts = append([]httplimit.Option{quiet}, opts...)
	if !e.noContext {
		opts = append([]httplimit.Option{httplimit.WithDecisionInContext()}, opts...)
	}
	if e.more != nil {
		opts = append(opts, e.more(lim)...)
	}
	e.lim = lim
	srv, err := a.New(t, lim, func(d core.Decision, ok bool) string {
		e.calls.Add(1)
		if e.onCall != nil {
			e.onCall()
		}
		return Body(d, ok)
	}, opts...)
	must.NoError(t, err)
	if srv.Close != nil {
		t.Cleanup(srv.Close)
	}
	e.srv = srv
}

// response is what the tests compare: status, the headers the middleware
// owns, and the body.
type response struct {
	Status  int
	Headers map[string]string
	Body    string
}

var ownedHeaders = []string{
	"Content-Type", httplimit.HeaderRetryAfter, httplimit.HeaderXRateLimitLimit, httplimit.HeaderXRateLimitRemain,
	httplimit.HeaderXRateLimitReset, httplimit.HeaderRateLimitPolicy, httplimit.HeaderRateLimit,
}

// do sends method path from peer with header pairs kv.
func (e *env) do(method, path, peer string, kv ...string) response {
	e.t.Helper()
	resp, err := e.send(context.Background(), method, path, peer, kv...)
	must.NoError(e.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(e.t, err)
	out := response{Status: resp.StatusCode, Headers: map[string]string{}, Body: string(body)}
	for _, h := range ownedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			out.Headers[h] = strings.Join(v, ", ")
		}
	}
	for name, vs := range resp.Header {
		for _, v := range vs {
			expect.LessOrEqual(e.t, len(v), 200, "header %s is long: request data echoed?", name)
		}
	}
	return out
}

func (e *env) send(ctx context.Context, method, path, peer string, kv ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://app.test"+path, nil)
	must.NoError(e.t, err)
	req.Header.Set(PeerHeader, peer)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	return e.srv.Do(req)
}

func ok(body string, h map[string]string) response {
	return response{Status: 200, Headers: h, Body: body}
}

func text(status int, body string, h map[string]string) response {
	h["Content-Type"] = httplimit.ContentTypeTextPlain
	return response{Status: status, Headers: h, Body: body}
}

// allowed returns the headers of an allowed request of a "default" limit.
func allowed(limit, window, remaining, reset string) map[string]string {
	return map[string]string{
		"Content-Type":          "text/plain; charset=utf-8",
		"X-Ratelimit-Limit":     limit,
		"X-Ratelimit-Remaining": remaining,
		"X-Ratelimit-Reset":     reset,
		"Ratelimit-Policy":      `"default";q=` + limit + ";w=" + window,
		"Ratelimit":             `"default";r=` + remaining + ";t=" + reset,
	}
}

// denied returns the headers of a request of a "default" limit denied for
// retry seconds.
func denied(limit, window, retry string) map[string]string {
	h := allowed(limit, window, "0", retry)
	h["Retry-After"] = retry
	delete(h, "Content-Type")
	return h
}

const (
	peerA = "192.0.2.10:1234"
	peerB = "198.51.100.7:4321"
)

// Run runs the conformance table against a: every adapter must give the same
// statuses, headers and bodies for the same script of requests.
func Run(t *testing.T, a Adapter) {
	for _, c := range cases {
		if c.disconnects && !a.Disconnects {
			continue // the adapter's requests are not sent over a connection
		}
		t.Run(c.name, func(t *testing.T) { c.check(t, a) })
	}
}

// cases are the conformance checks, each a script of requests and the
// answers every adapter must give; disconnects marks those that need a
// client able to hang up (Adapter.Disconnects).
var cases = []struct {
	name        string
	check       func(t *testing.T, a Adapter)
	disconnects bool
}{
	{"allowed, denied, negotiated, HEAD", checkAllowedDeniedNegotiatedHEAD, false},
	{"no decision in the context by default", checkNoDecisionInTheContextByDefault, false},
	{"spoofed forwarding headers from an untrusted peer", checkSpoofedForwardingHeadersFromAnUntrustedPeer, false},
	{"rotating IPv6 inside one /64 is one client", checkRotatingIPv6InsideOne64IsOneClient, false},
	{"JWT subject", checkJWTSubject, false},
	{"key per route", checkKeyPerRoute, false},
	{"huge header and bad peer get clean answers", checkHugeHeaderAndBadPeerGetCleanAnswers, false},
	{"skip", checkSkip, false},
	{"cost", checkCost, false},
	{"two limits", checkTwoLimits, false},
	{"store failure", checkStoreFailure, false},
	{"Retry-After rounds up", checkRetryAfterRoundsUp, false},
	{"fail-closed Retry-After is configurable", checkFailClosedRetryAfterIsConfigurable, false},
	{"a full store refuses new keys", checkAFullStoreRefusesNewKeys, false},
	{"an open breaker answers at once", checkAnOpenBreakerAnswersAtOnce, false},
	{"leaky bucket holds", checkLeakyBucketHolds, false},
	{"a client that leaves stops the hold", checkAClientThatLeavesStopsTheHold, true},
	{"invalid construction", checkInvalidConstruction, false},
	{"dry run", checkDryRun, false},
	{"every outcome reaches the observer", checkEveryOutcomeReachesTheObserver, false},
	{"in-flight limit", checkInFlightLimit, false},
	{"tiers", checkTiers, false},
	{"refund counts only failures", checkRefundCountsOnlyFailures, false},
	{"refunded headers tell the refund", checkRefundedHeadersTellTheRefund, false},
	{"refunded group headers tell the refund", checkRefundedGroupHeadersTellTheRefund, false},
	{"settle reads the response header", checkSettleReadsTheResponseHeader, false},
	{"denied handler renders through the framework", checkDeniedHandlerRendersThroughTheFramework, false},
}

var errStoreDown = errors.New("store down: 10.1.2.3:6379 refused")

type failingStore struct{}

func (failingStore) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	return core.Decision{}, errStoreDown
}

// NetHTTPApp is the conformance app on net/http, mw (an adapter's net/http
// middleware, such as stdhttp's) around every route and h answering, served
// on an httptest server: for stdhttp's conformance and for adapters built on
// net/http.
func NetHTTPApp(mw func(http.Handler) http.Handler, h Handler) *Server {
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := httplimit.DecisionFromContext(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		SetCost(r.Header.Get(CostHeader), w.Header().Set)
		w.WriteHeader(Status(r.Header.Get(StatusHeader)))
		_, _ = w.Write([]byte(h(d, ok)))
	}))
	mux := http.NewServeMux()
	mux.Handle("/users/{id}", handler)
	mux.Handle("/health", handler)
	mux.Handle("/{$}", handler) // "/" alone, as the other frameworks' apps route it
	return HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetPeer(r)
		mux.ServeHTTP(w, r)
	}))
}
