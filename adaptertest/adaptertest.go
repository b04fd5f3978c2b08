package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwt"
	"github.com/ratewarden/ratewarden/store/memory"
)

// PeerHeader is the request header whose value the app under test must make
// the peer address (RemoteAddr) before the middleware runs, when present: it
// lets one test client act as many clients. SetPeer does it for net/http.
const PeerHeader = "X-Test-Peer"

// Handler is what every route of the app under test does: read the decision
// through the adapter's own accessor (DecisionFrom; the suite builds the
// middleware with httplimit.WithDecisionInContext unless it tests the default), pass it here, and answer
// 200 with the returned string as the body, with Content-Type
// "text/plain; charset=utf-8".
type Handler func(d core.Decision, ok bool) string

// Server is a running app under test.
type Server struct {
	// Do sends one request, whose URL path is the route to call, and returns
	// the response.
	Do func(r *http.Request) (*http.Response, error)
	// Close stops the app and waits for every request in flight; nil when
	// there is nothing to stop.
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
	clk       *core.ManualClock
	srv       *Server
	calls     atomic.Int64
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
		require.NoError(t, err)
		t.Cleanup(func() { _ = ms.Close() })
		st = ms
	}
	lim, err := core.NewLimiter(st, alg, limit, append([]core.Option{core.WithClock(e.clk)}, lopts...)...)
	require.NoError(t, err)
	if !e.noContext {
		opts = append([]httplimit.Option{httplimit.WithDecisionInContext()}, opts...)
	}
	srv, err := a.New(t, lim, func(d core.Decision, ok bool) string {
		e.calls.Add(1)
		return Body(d, ok)
	}, opts...)
	require.NoError(t, err)
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
	require.NoError(e.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := response{Status: resp.StatusCode, Headers: map[string]string{}, Body: string(body)}
	for _, h := range ownedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			out.Headers[h] = strings.Join(v, ", ")
		}
	}
	for name, vs := range resp.Header {
		for _, v := range vs {
			assert.LessOrEqual(e.t, len(v), 200, "header %s is long: request data echoed?", name)
		}
	}
	return out
}

func (e *env) send(ctx context.Context, method, path, peer string, kv ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://app.test"+path, nil)
	require.NoError(e.t, err)
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
	t.Run("allowed, denied, negotiated, HEAD", func(t *testing.T) {
		e := start(t, a, nil, core.FixedWindow, core.PerMinute(2), nil)
		assert.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "60")), e.do("GET", "/", peerA))
		e.clk.Advance(20 * time.Second)
		assert.Equal(t, ok("ok, remaining 0", allowed("2", "60", "0", "40")), e.do("GET", "/", peerA))
		assert.Equal(t, text(429, "Too Many Requests\n", denied("2", "60", "40")), e.do("GET", "/", peerA))
		assert.Equal(t, text(429, "Too Many Requests\n", denied("2", "60", "40")), e.do("GET", "/", peerA, "Accept", "text/html,*/*;q=0.8"))
		jsonResp := e.do("POST", "/users/7", peerA, "Accept", "application/json")
		assert.Equal(t, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"violated-policies":["default"]}`, jsonResp.Body)
		assert.Equal(t, httplimit.ContentTypeProblemJSON, jsonResp.Headers["Content-Type"])
		head := e.do("HEAD", "/", peerA, "Accept", "application/json")
		assert.Equal(t, 429, head.Status)
		assert.Empty(t, head.Body)
		assert.Equal(t, "40", head.Headers["Retry-After"])
		assert.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "40")), e.do("GET", "/", peerB), "another client has its own quota, same aligned window")
		e.clk.Advance(40 * time.Second)
		assert.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "60")), e.do("GET", "/", peerA), "a new window")
		assert.Equal(t, int64(4), e.calls.Load())
	})

	t.Run("no decision in the context by default", func(t *testing.T) {
		e := newEnv(t)
		e.noContext = true
		e.run(a, nil, core.GCRA, core.PerMinute(5), nil)
		for _, want := range [][2]string{{"4", "12"}, {"3", "24"}} {
			assert.Equal(t, ok("ok, no decision", allowed("5", "60", want[0], want[1])), e.do("GET", "/", peerA))
		}
	})

	t.Run("spoofed forwarding headers from an untrusted peer", func(t *testing.T) {
		e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil)
		assert.Equal(t, 200, e.do("GET", "/", peerA, "X-Forwarded-For", "203.0.113.1").Status)
		for i, kv := range [][]string{
			{"X-Forwarded-For", "203.0.113.2"},
			{"X-Forwarded-For", "203.0.113.3, 10.0.0.1"},
			{"X-Real-Ip", "203.0.113.4"},
			{"Forwarded", "for=203.0.113.5"},
		} {
			assert.Equal(t, 429, e.do("GET", "/", peerA, kv...).Status, "spoof %d", i)
		}
	})

	t.Run("rotating IPv6 inside one /64 is one client", func(t *testing.T) {
		e := start(t, a, nil, core.GCRA, core.PerMinute(2), nil)
		assert.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:2::1]:1000").Status)
		assert.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1001").Status)
		assert.Equal(t, 429, e.do("GET", "/", "[2001:db8:1:2:ffff::9]:1002").Status)
		assert.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:3::1]:1003").Status, "the next /64 is another client")
	})

	t.Run("JWT subject", func(t *testing.T) {
		secret := []byte("0123456789abcdef0123456789abcdef")
		e := newEnv(t)
		kf, err := jwt.Subject(jwt.WithHMACSecret(secret), jwt.WithClock(e.clk))
		require.NoError(t, err)
		e.run(a, nil, core.GCRA, core.PerMinute(5), nil, httplimit.WithKey(kf))
		sign := func(m gojwt.SigningMethod, key any, claims gojwt.MapClaims) string {
			s, err := gojwt.NewWithClaims(m, claims).SignedString(key)
			require.NoError(t, err)
			return "Bearer " + s
		}
		good := gojwt.MapClaims{"sub": "alice", "exp": t0.Add(time.Hour).Unix()}
		assert.Equal(t, ok("ok, remaining 4", allowed("5", "60", "4", "12")), e.do("GET", "/", peerA, "Authorization", sign(gojwt.SigningMethodHS256, secret, good)))
		unauthorized := text(401, "Unauthorized\n", map[string]string{})
		for name, auth := range map[string]string{
			"wrong key": sign(gojwt.SigningMethodHS256, []byte("another secret, 32 bytes long!!"), good),
			"expired":   sign(gojwt.SigningMethodHS256, secret, gojwt.MapClaims{"sub": "alice", "exp": t0.Add(-time.Minute).Unix()}),
			"alg none":  sign(gojwt.SigningMethodNone, gojwt.UnsafeAllowNoneSignatureType, good),
			"missing":   "",
			"garbage":   "Bearer a.b.c",
			"huge":      "Bearer " + strings.Repeat("x", 64<<10),
		} {
			assert.Equal(t, unauthorized, e.do("GET", "/", peerA, "Authorization", auth), name)
		}
		assert.Equal(t, int64(1), e.calls.Load())
	})

	t.Run("key per route", func(t *testing.T) {
		ip, err := keyfuncs.IP()
		require.NoError(t, err)
		kf, err := keyfuncs.Compose(keyfuncs.Route(), ip)
		require.NoError(t, err)
		e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil, httplimit.WithKey(kf))
		assert.Equal(t, 200, e.do("GET", "/users/1", peerA).Status)
		assert.Equal(t, 429, e.do("GET", "/users/2", peerA).Status, "same route pattern")
		assert.Equal(t, 200, e.do("GET", "/", peerA).Status, "another route")
	})

	t.Run("huge header and bad peer get clean answers", func(t *testing.T) {
		e := start(t, a, nil, core.GCRA, core.PerMinute(5), nil)
		huge := strings.Repeat("203.0.113.9, ", 5000)
		assert.Equal(t, ok("ok, remaining 4", allowed("5", "60", "4", "12")), e.do("GET", "/", peerA, "X-Forwarded-For", huge, "Accept", huge))
		assert.Equal(t, text(401, "Unauthorized\n", map[string]string{}), e.do("GET", "/", "not-an-address"))
	})

	t.Run("skip", func(t *testing.T) {
		e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil,
			httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" }))
		for range 3 {
			assert.Equal(t, ok("ok, no decision", map[string]string{"Content-Type": "text/plain; charset=utf-8"}), e.do("GET", "/health", peerA))
		}
		assert.Equal(t, 200, e.do("GET", "/", peerA).Status)
		assert.Equal(t, 429, e.do("GET", "/", peerA).Status)
	})

	t.Run("cost", func(t *testing.T) {
		e := start(t, a, nil, core.TokenBucket, core.PerMinute(3), nil,
			httplimit.WithCost(func(r keyfuncs.Request) int64 {
				if r.Method() == "POST" {
					return 2
				}
				return 1
			}))
		assert.Equal(t, ok("ok, remaining 1", allowed("3", "60", "1", "40")), e.do("POST", "/", peerA))
		deniedPost := denied("3", "60", "20")
		deniedPost["X-Ratelimit-Remaining"], deniedPost["Ratelimit"] = "1", `"default";r=1;t=20`
		assert.Equal(t, text(429, "Too Many Requests\n", deniedPost), e.do("POST", "/", peerA), "1 left, 2 asked")
		assert.Equal(t, ok("ok, remaining 0", allowed("3", "60", "0", "60")), e.do("GET", "/", peerA))
	})

	t.Run("two limits", func(t *testing.T) {
		e := start(t, a, nil, core.GCRA, core.PerSecond(10), []core.Option{core.WithLimit(core.PerMinute(2).Named("per-minute"))})
		policy := `"default";q=10;w=1, "per-minute";q=2;w=60`
		r := e.do("GET", "/", peerA)
		assert.Equal(t, policy, r.Headers["Ratelimit-Policy"])
		assert.Equal(t, `"per-minute";r=1;t=30`, r.Headers["Ratelimit"])
		assert.Equal(t, "2", r.Headers["X-Ratelimit-Limit"])
		e.do("GET", "/", peerA)
		r = e.do("GET", "/", peerA, "Accept", "application/problem+json")
		assert.Equal(t, 429, r.Status)
		assert.Equal(t, "30", r.Headers["Retry-After"])
		assert.Contains(t, r.Body, `"violated-policies":["per-minute"]`)
	})

	t.Run("store failure", func(t *testing.T) {
		for _, closed := range []bool{false, true} {
			var hooked atomic.Int64
			opts := []httplimit.Option{httplimit.WithErrorHandler(func(_ keyfuncs.Request, err error) {
				if errors.Is(err, errStoreDown) {
					hooked.Add(1)
				}
			})}
			want := ok("ok, no decision", map[string]string{"Content-Type": "text/plain; charset=utf-8"})
			if closed {
				opts = append(opts, httplimit.WithFailClosed())
				want = text(503, "Service Unavailable\n", map[string]string{})
			}
			e := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), nil, opts...)
			assert.Equal(t, want, e.do("GET", "/", peerA), "fail closed: %v", closed)
			assert.Equal(t, int64(1), hooked.Load())
		}
	})

	t.Run("leaky bucket holds", func(t *testing.T) {
		e := start(t, a, nil, core.LeakyBucket, core.PerSecond(100).WithBurst(5), nil, httplimit.WithMaxDelay(15*time.Millisecond))
		for i, hold := range []time.Duration{0, 10 * time.Millisecond} {
			began := time.Now()
			assert.Equal(t, 200, e.do("GET", "/", peerA).Status, "request %d", i)
			assert.GreaterOrEqual(t, time.Since(began), hold, "request %d", i)
		}
		r := e.do("GET", "/", peerA)
		assert.Equal(t, 429, r.Status, "a hold above the maximum is refused")
		assert.Equal(t, "1", r.Headers["Retry-After"])
		assert.Equal(t, int64(2), e.calls.Load())
	})

	if a.Disconnects {
		t.Run("a client that leaves stops the hold", func(t *testing.T) {
			ctx, hangUp := context.WithCancel(context.Background())
			ip, err := keyfuncs.IP()
			require.NoError(t, err)
			var once sync.Once
			kf := func(r keyfuncs.Request) (string, error) {
				if r.Header("X-Hang-Up") != "" {
					once.Do(hangUp)
				}
				return ip(r)
			}
			e := start(t, a, nil, core.LeakyBucket, core.PerHour(1).WithBurst(5), nil, httplimit.WithKey(kf))
			assert.Equal(t, 200, e.do("GET", "/", peerA).Status)
			_, err = e.send(ctx, "GET", "/", peerA, "X-Hang-Up", "1")
			require.ErrorIs(t, err, context.Canceled)
			e.srv.Close() // waits for the held request: it would hang for an hour
			assert.Equal(t, int64(1), e.calls.Load())
		})
	}

	t.Run("invalid construction", func(t *testing.T) {
		_, err := a.New(t, nil, Body)
		assert.ErrorIs(t, err, core.ErrInvalidOption)
		lim, err := core.NewLimiter(failingStore{}, core.GCRA, core.PerMinute(1))
		require.NoError(t, err)
		_, err = a.New(t, lim, Body, httplimit.WithKey(nil))
		assert.ErrorIs(t, err, core.ErrInvalidOption)
		_, err = a.New(t, lim, Body, nil)
		assert.ErrorIs(t, err, core.ErrInvalidOption)
	})
}

var errStoreDown = errors.New("store down: 10.1.2.3:6379 refused")

type failingStore struct{}

func (failingStore) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	return core.Decision{}, errStoreDown
}
