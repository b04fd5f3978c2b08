package adaptertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
)

func checkAllowedDeniedNegotiatedHEAD(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(2), nil)
	expect.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "60")), e.do("GET", "/", peerA))
	e.clk.Advance(20 * time.Second)
	expect.Equal(t, ok("ok, remaining 0", allowed("2", "60", "0", "40")), e.do("GET", "/", peerA))
	expect.Equal(t, text(429, "Too Many Requests\n", denied("2", "60", "40")), e.do("GET", "/", peerA))
	expect.Equal(t, text(429, "Too Many Requests\n", denied("2", "60", "40")), e.do("GET", "/", peerA, "Accept", "text/html,*/*;q=0.8"))
	jsonResp := e.do("POST", "/users/7", peerA, "Accept", "application/json")
	expect.Equal(t, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"violated-policies":["default"]}`, jsonResp.Body)
	expect.Equal(t, httplimit.ContentTypeProblemJSON, jsonResp.Headers["Content-Type"])
	head := e.do("HEAD", "/", peerA, "Accept", "application/json")
	expect.Equal(t, 429, head.Status)
	expect.Empty(t, head.Body)
	expect.Equal(t, "40", head.Headers["Retry-After"])
	expect.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "40")), e.do("GET", "/", peerB), "another client has its own quota, same aligned window")
	e.clk.Advance(40 * time.Second)
	expect.Equal(t, ok("ok, remaining 1", allowed("2", "60", "1", "60")), e.do("GET", "/", peerA), "a new window")
	expect.Equal(t, int64(4), e.calls.Load())
}

func checkNoDecisionInTheContextByDefault(t *testing.T, a Adapter) {
	e := newEnv(t)
	e.noContext = true
	e.run(a, nil, core.GCRA, core.PerMinute(5), nil)
	for _, want := range [][2]string{{"4", "12"}, {"3", "24"}} {
		expect.Equal(t, ok("ok, no decision", allowed("5", "60", want[0], want[1])), e.do("GET", "/", peerA))
	}
}

func checkSpoofedForwardingHeadersFromAnUntrustedPeer(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil)
	expect.Equal(t, 200, e.do("GET", "/", peerA, "X-Forwarded-For", "203.0.113.1").Status)
	for i, kv := range [][]string{
		{"X-Forwarded-For", "203.0.113.2"},
		{"X-Forwarded-For", "203.0.113.3, 10.0.0.1"},
		{"X-Real-Ip", "203.0.113.4"},
		{"Forwarded", "for=203.0.113.5"},
	} {
		expect.Equal(t, 429, e.do("GET", "/", peerA, kv...).Status, "spoof %d", i)
	}
}

func checkRotatingIPv6InsideOne64IsOneClient(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.PerMinute(2), nil)
	expect.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:2::1]:1000").Status)
	expect.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1001").Status)
	expect.Equal(t, 429, e.do("GET", "/", "[2001:db8:1:2:ffff::9]:1002").Status)
	expect.Equal(t, 200, e.do("GET", "/", "[2001:db8:1:3::1]:1003").Status, "the next /64 is another client")
}

func checkJWTSubject(t *testing.T, a Adapter) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	e := newEnv(t)
	kf, err := jwtkey.Subject(jwtkey.WithHMACSecret(secret), jwtkey.WithClock(e.clk))
	must.NoError(t, err)
	e.run(a, nil, core.GCRA, core.PerMinute(5), nil, httplimit.WithKey(kf))
	sign := func(m gojwt.SigningMethod, key any, claims gojwt.MapClaims) string {
		s, err := gojwt.NewWithClaims(m, claims).SignedString(key)
		must.NoError(t, err)
		return "Bearer " + s
	}
	good := gojwt.MapClaims{"sub": "alice", "exp": t0.Add(time.Hour).Unix()}
	expect.Equal(t, ok("ok, remaining 4", allowed("5", "60", "4", "12")), e.do("GET", "/", peerA, "Authorization", sign(gojwt.SigningMethodHS256, secret, good)))
	unauthorized := text(401, "Unauthorized\n", map[string]string{})
	for name, auth := range map[string]string{
		"wrong key": sign(gojwt.SigningMethodHS256, []byte("another secret, 32 bytes long!!"), good),
		"expired":   sign(gojwt.SigningMethodHS256, secret, gojwt.MapClaims{"sub": "alice", "exp": t0.Add(-time.Minute).Unix()}),
		"alg none":  sign(gojwt.SigningMethodNone, gojwt.UnsafeAllowNoneSignatureType, good),
		"missing":   "",
		"garbage":   "Bearer a.b.c",
		"huge":      "Bearer " + strings.Repeat("x", 64<<10),
	} {
		expect.Equal(t, unauthorized, e.do("GET", "/", peerA, "Authorization", auth), name)
	}
	expect.Equal(t, int64(1), e.calls.Load())
}

func checkKeyPerRoute(t *testing.T, a Adapter) {
	ip, err := keyfuncs.IP()
	must.NoError(t, err)
	kf, err := keyfuncs.Compose(keyfuncs.Route(), ip)
	must.NoError(t, err)
	e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil, httplimit.WithKey(kf))
	expect.Equal(t, 200, e.do("GET", "/users/1", peerA).Status)
	expect.Equal(t, 429, e.do("GET", "/users/2", peerA).Status, "same route pattern")
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status, "another route")
}

func checkHugeHeaderAndBadPeerGetCleanAnswers(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.PerMinute(5), nil)
	huge := strings.Repeat("203.0.113.9, ", 5000)
	expect.Equal(t, ok("ok, remaining 4", allowed("5", "60", "4", "12")), e.do("GET", "/", peerA, "X-Forwarded-For", huge, "Accept", huge))
	expect.Equal(t, text(500, "Internal Server Error\n", map[string]string{}), e.do("GET", "/", "not-an-address"), "a peer that is not an IP is the server's configuration")
}

func checkSkip(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.PerMinute(1), nil,
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" }))
	for range 3 {
		expect.Equal(t, ok("ok, no decision", map[string]string{"Content-Type": "text/plain; charset=utf-8"}), e.do("GET", "/health", peerA))
	}
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	expect.Equal(t, 429, e.do("GET", "/", peerA).Status)
}

func checkCost(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.TokenBucket, core.PerMinute(3), nil,
		httplimit.WithCost(func(r keyfuncs.Request) int64 {
			if r.Method() == "POST" {
				return 2
			}
			return 1
		}))
	expect.Equal(t, ok("ok, remaining 1", allowed("3", "60", "1", "40")), e.do("POST", "/", peerA))
	deniedPost := denied("3", "60", "20")
	deniedPost["X-Ratelimit-Remaining"], deniedPost["Ratelimit"] = "1", `"default";r=1;t=20`
	expect.Equal(t, text(429, "Too Many Requests\n", deniedPost), e.do("POST", "/", peerA), "1 left, 2 asked")
	expect.Equal(t, ok("ok, remaining 0", allowed("3", "60", "0", "60")), e.do("GET", "/", peerA))
}

func checkTwoLimits(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.GCRA, core.PerSecond(10), []core.Option{core.WithLimit(core.PerMinute(2).Named("per-minute"))})
	policy := `"default";q=10;w=1, "per-minute";q=2;w=60`
	r := e.do("GET", "/", peerA)
	expect.Equal(t, policy, r.Headers["Ratelimit-Policy"])
	expect.Equal(t, `"per-minute";r=1;t=30`, r.Headers["Ratelimit"])
	expect.Equal(t, "2", r.Headers["X-Ratelimit-Limit"])
	e.do("GET", "/", peerA)
	r = e.do("GET", "/", peerA, "Accept", "application/problem+json")
	expect.Equal(t, 429, r.Status)
	expect.Equal(t, "30", r.Headers["Retry-After"])
	expect.Contains(t, r.Body, `"violated-policies":["per-minute"]`)
}

func checkStoreFailure(t *testing.T, a Adapter) {
	for _, closed := range []bool{false, true} {
		var hooked atomic.Int64
		opts := []httplimit.Option{httplimit.WithObserver(httplimit.ObserverFunc(func(e httplimit.Event) {
			if errors.Is(e.Err, errStoreDown) {
				hooked.Add(1)
			}
		}))}
		want := ok("ok, no decision", map[string]string{"Content-Type": "text/plain; charset=utf-8"})
		if closed {
			opts = append(opts, httplimit.WithFailClosed())
			want = text(503, "Service Unavailable\n", map[string]string{"Retry-After": "1"})
		}
		e := start(t, a, failingStore{}, core.GCRA, core.PerMinute(1), nil, opts...)
		expect.Equal(t, want, e.do("GET", "/", peerA), "fail closed: %v", closed)
		expect.Equal(t, int64(1), hooked.Load())
	}
}

func checkLeakyBucketHolds(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.LeakyBucket, core.PerSecond(100).WithBurst(5), nil, httplimit.WithMaxDelay(15*time.Millisecond))
	for i, hold := range []time.Duration{0, 10 * time.Millisecond} {
		began := time.Now()
		expect.Equal(t, 200, e.do("GET", "/", peerA).Status, "request %d", i)
		expect.GreaterOrEqual(t, time.Since(began), hold, "request %d", i)
	}
	r := e.do("GET", "/", peerA)
	expect.Equal(t, 429, r.Status, "a hold above the maximum is refused")
	expect.Equal(t, "1", r.Headers["Retry-After"])
	expect.Equal(t, int64(2), e.calls.Load())
}

func checkAClientThatLeavesStopsTheHold(t *testing.T, a Adapter) {
	ctx, hangUp := context.WithCancel(context.Background())
	ip, err := keyfuncs.IP()
	must.NoError(t, err)
	var once sync.Once
	kf := func(r keyfuncs.Request) (string, error) {
		if r.Header("X-Hang-Up") != "" {
			once.Do(hangUp)
		}
		return ip(r)
	}
	e := start(t, a, nil, core.LeakyBucket, core.PerHour(1).WithBurst(5), nil, httplimit.WithKey(kf))
	expect.Equal(t, 200, e.do("GET", "/", peerA).Status)
	_, err = e.send(ctx, "GET", "/", peerA, "X-Hang-Up", "1")
	must.ErrorIs(t, err, context.Canceled)
	e.srv.Close() // waits for the held request: it would hang for an hour
	expect.Equal(t, int64(1), e.calls.Load())
}

func checkInvalidConstruction(t *testing.T, a Adapter) {
	_, err := a.New(t, nil, Body)
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	lim, err := core.NewLimiter(failingStore{}, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	_, err = a.New(t, lim, Body, httplimit.WithKey(nil))
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = a.New(t, lim, Body, nil)
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	for _, bad := range []httplimit.Option{
		httplimit.WithObserver(nil), httplimit.WithRefund(nil), httplimit.WithTiers(nil), httplimit.WithDeniedHandler(nil), httplimit.WithLogger(nil),
		httplimit.WithUnavailableRetryAfter(0), httplimit.WithUnavailableRetryAfter(-time.Second),
	} {
		_, err = a.New(t, lim, Body, bad)
		expect.ErrorIs(t, err, core.ErrInvalidOption)
	}
}
