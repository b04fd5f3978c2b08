package httplimit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// mapStore is the smallest correct Store: a mutex and a map, deciding with
// ApplyAll. fail, when set, is returned instead of deciding; block makes Take
// wait for its context.
type mapStore struct {
	mu     sync.Mutex
	states map[storeKey][]core.State
	fail   error
	block  bool
}

func (s *mapStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if s.block {
		<-ctx.Done()
		return core.Decision{}, ctx.Err()
	}
	if s.fail != nil {
		return core.Decision{}, s.fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[storeKey][]core.State{}
	}
	k := storeKey{req.Namespace, req.Key}
	st, ok := s.states[k]
	if !ok {
		st = make([]core.State, len(req.Limits))
		s.states[k] = st
	}
	return req.Algorithm.ApplyAll(st, req.Limits, req.Cost, core.Micros(req.Now))
}

type storeKey struct{ ns, key string }

// localMapStore is a mapStore that says it decides in process.
type localMapStore struct{ mapStore }

func (*localMapStore) Local() bool { return true }

// fakeReq is a keyfuncs.Request over plain fields.
type fakeReq struct {
	addr, method, path string
	h                  http.Header
}

func (r *fakeReq) RemoteAddr() string                { return r.addr }
func (r *fakeReq) Header(name string) string         { return r.h.Get(name) }
func (r *fakeReq) HeaderValues(name string) []string { return r.h.Values(name) }
func (r *fakeReq) Method() string                    { return r.method }
func (r *fakeReq) Path() string                      { return r.path }
func (r *fakeReq) Route() string                     { return r.path }
func (r *fakeReq) Context() context.Context          { return context.Background() }

func get(addr string, kv ...string) *fakeReq {
	r := &fakeReq{addr: addr, method: "GET", path: "/", h: http.Header{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.h.Set(kv[i], kv[i+1])
	}
	return r
}

func peerKey(r keyfuncs.Request) (string, error) { return r.RemoteAddr(), nil }

func apiKey(r keyfuncs.Request) (string, error) {
	if k := r.Header("X-Api-Key"); k != "" {
		return k, nil
	}
	return "", keyfuncs.ErrKey
}

var httpT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newPolicy(t *testing.T, st core.Store, alg core.Algorithm, l core.Limit, lopts []core.Option, opts ...Option) (*Policy, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(httpT0)
	lim, err := core.NewLimiter(st, alg, l, append([]core.Option{core.WithClock(clk)}, lopts...)...)
	must.NoError(t, err)
	p, err := New(lim, append([]Option{WithKey(peerKey)}, opts...)...)
	must.NoError(t, err)
	return p, clk
}

func headersOf(o *outcome) map[string]string {
	m := map[string]string{}
	for i := range o.numHeaders() {
		name, vals := o.header(i)
		m[name] = vals[0]
	}
	return m
}

func TestNewRejectsBadInput(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(10))
	must.NoError(t, err)
	badName, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(10).Named("caf\u00e9"))
	must.NoError(t, err)
	key := WithKey(peerKey)
	tests := []struct {
		name string
		lim  *core.Limiter
		opts []Option
	}{
		{"nil limiter", nil, []Option{key}},
		{"nil option", lim, []Option{key, nil}},
		{"nil key func", lim, []Option{WithKey(nil)}},
		{"nil fallback", lim, []Option{key, WithKeyFallback(nil)}},
		{"nil key responder", lim, []Option{key, WithKeyErrorResponder(nil)}},
		{"nil responder", lim, []Option{key, WithResponder(nil)}},
		{"nil observer", lim, []Option{key, WithObserver(nil)}},
		{"nil logger", lim, []Option{key, WithLogger(nil)}},
		{"nil denied handler", lim, []Option{key, WithDeniedHandler(nil)}},
		{"nil refund", lim, []Option{key, WithRefund(nil)}},
		{"nil skip", lim, []Option{key, WithSkip(nil)}},
		{"nil cost", lim, []Option{key, WithCost(nil)}},
		{"negative timeout", lim, []Option{key, WithStoreTimeout(-time.Second)}},
		{"zero max delay", lim, []Option{key, WithMaxDelay(0)}},
		{"unknown header set", lim, []Option{key, WithHeaders(8)}},
		{"zero unavailable Retry-After", lim, []Option{key, WithUnavailableRetryAfter(0)}},
		{"non-ASCII limit name", badName, []Option{key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.lim, tt.opts...)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Nil(t, p)
		})
	}
}

func TestDecideAllowedAndDenied(t *testing.T) {
	p, clk := newPolicy(t, &mapStore{}, core.FixedWindow, core.PerMinute(2), nil)
	ctx := context.Background()
	want := []struct {
		remaining, reset string
	}{{"1", "60"}, {"0", "60"}}
	for i, w := range want {
		o := p.decideNow(ctx, get("192.0.2.1"))
		must.Equal(t, actionPass, o.action, "request %d", i)
		expect.Equal(t, map[string]string{
			"X-Ratelimit-Limit":     "2",
			"X-Ratelimit-Remaining": w.remaining,
			"X-Ratelimit-Reset":     w.reset,
			"Ratelimit-Policy":      `"default";q=2;w=60`,
			"Ratelimit":             `"default";r=` + w.remaining + ";t=" + w.reset,
		}, headersOf(o))
	}
	clk.Advance(15 * time.Second)
	o := p.decideNow(ctx, get("192.0.2.1"))
	must.Equal(t, actionRespond, o.action)
	expect.Equal(t, 429, o.response.Status)
	expect.Equal(t, ContentTypeTextPlain, o.response.ContentType)
	expect.Equal(t, "Too Many Requests\n", string(o.response.Body))
	expect.Equal(t, map[string]string{
		"Retry-After":           "45",
		"X-Ratelimit-Limit":     "2",
		"X-Ratelimit-Remaining": "0",
		"X-Ratelimit-Reset":     "45",
		"Ratelimit-Policy":      `"default";q=2;w=60`,
		"Ratelimit":             `"default";r=0;t=45`,
	}, headersOf(o))

	o = p.decideNow(ctx, get("192.0.2.1", "Accept", "application/json"))
	expect.Equal(t, ContentTypeProblemJSON, o.response.ContentType)
	expect.JSONEq(t, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
		"title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,
		"violated-policies":["default"]}`, string(o.response.Body))

	head := get("192.0.2.1", "Accept", "application/json")
	head.method = "HEAD"
	o = p.decideNow(ctx, head)
	expect.Equal(t, 429, o.response.Status)
	expect.Nil(t, o.response.Body)

	o = p.decideNow(ctx, get("192.0.2.2"))
	expect.Equal(t, actionPass, o.action, "another key has its own quota")
}

func TestDecideTwoLimitsNamesTheGoverningOne(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerSecond(5),
		[]core.Option{core.WithLimit(core.PerHour(2).Named("hourly"))})
	ctx := context.Background()
	o := p.decideNow(ctx, get("a"))
	expect.Equal(t, `"default";q=5;w=1, "hourly";q=2;w=3600`, headersOf(o)["Ratelimit-Policy"])
	expect.Equal(t, `"hourly";r=1;t=1800`, headersOf(o)["Ratelimit"])
	p.decideNow(ctx, get("a"))
	o = p.decideNow(ctx, get("a", "Accept", "application/problem+json"))
	must.Equal(t, 429, o.response.Status)
	expect.Contains(t, string(o.response.Body), `"violated-policies":["hourly"]`)
	expect.Equal(t, "1800", headersOf(o)["Retry-After"])
}

func TestDecideHeaderToggles(t *testing.T) {
	tests := []struct {
		name         string
		opts         []Option
		allowed, all []string
	}{
		{"default", nil,
			[]string{"Ratelimit", "Ratelimit-Policy", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
			[]string{"Ratelimit", "Ratelimit-Policy", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
		{"ietf only", []Option{WithHeaders(IETFHeaders)},
			[]string{"Ratelimit", "Ratelimit-Policy"}, []string{"Ratelimit", "Ratelimit-Policy", "Retry-After"}},
		{"x only", []Option{WithHeaders(XRateLimitHeaders)},
			[]string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
			[]string{"Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
		{"none", []Option{WithHeaders(0)}, []string{}, []string{"Retry-After"}},
		{"denied only", []Option{WithoutHeadersOnAllowed()}, []string{},
			[]string{"Ratelimit", "Ratelimit-Policy", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &mapStore{}, core.TokenBucket, core.PerMinute(1), nil, tt.opts...)
			names := func(o *outcome) []string {
				out := []string{}
				for i := range o.numHeaders() {
					name, _ := o.header(i)
					out = append(out, name)
				}
				return out
			}
			expect.ElementsMatch(t, tt.allowed, names(p.decideNow(context.Background(), get("a"))))
			expect.ElementsMatch(t, tt.all, names(p.decideNow(context.Background(), get("a"))))
		})
	}
}

func TestDecideKeyErrors(t *testing.T) {
	custom := WithKeyErrorResponder(func(_ keyfuncs.Request, err error) Response {
		if !errors.Is(err, keyfuncs.ErrKey) {
			return Response{Status: 500}
		}
		return Response{Status: 403, ContentType: "text/plain", Body: []byte("no key\n")}
	})
	tests := []struct {
		name        string
		opts        []Option
		req         *fakeReq
		status      int
		contentType string
		body        string
	}{
		{"text", nil, get("a"), 401, ContentTypeTextPlain, "Unauthorized\n"},
		{"json", nil, get("a", "Accept", "application/json"), 401, ContentTypeProblemJSON,
			`{"type":"about:blank","title":"Unauthorized","status":401}`},
		{"custom", []Option{custom}, get("a"), 403, "text/plain", "no key\n"},
		{"fallback", []Option{WithKeyFallback(peerKey)}, get("a"), 0, "", ""},
		{"failing fallback", []Option{WithKeyFallback(apiKey)}, get("a"), 401, ContentTypeTextPlain, "Unauthorized\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
			must.NoError(t, err)
			p, err := New(lim, append([]Option{WithKey(apiKey)}, tt.opts...)...)
			must.NoError(t, err)
			o := p.decideNow(context.Background(), tt.req)
			if tt.status == 0 {
				expect.Equal(t, actionPass, o.action)
				expect.True(t, o.decided)
				return
			}
			expect.Equal(t, actionRespond, o.action)
			expect.False(t, o.decided)
			expect.Equal(t, tt.status, o.response.Status)
			expect.Equal(t, tt.contentType, o.response.ContentType)
			expect.Equal(t, tt.body, string(o.response.Body))
			expect.Zero(t, o.numHeaders())
		})
	}
}

func TestDecideLimiterErrors(t *testing.T) {
	boom := errors.New("boom: secret detail 10.0.0.7")
	tests := []struct {
		name   string
		store  *mapStore
		opts   []Option
		status int
		is     error
		retry  string // the 503's Retry-After
	}{
		{"fail open", &mapStore{fail: boom}, nil, 0, boom, ""},
		{"fail closed", &mapStore{fail: boom}, []Option{WithFailClosed()}, 503, boom, "1"},
		{"fail closed, 30 s", &mapStore{fail: boom}, []Option{WithFailClosed(), WithUnavailableRetryAfter(30 * time.Second)}, 503, boom, "30"},
		{"fail closed, 1.5 s rounds up", &mapStore{fail: boom}, []Option{WithFailClosed(), WithUnavailableRetryAfter(1500 * time.Millisecond)}, 503, boom, "2"},
		{"fail closed, 1 ms rounds up", &mapStore{fail: boom}, []Option{WithFailClosed(), WithUnavailableRetryAfter(time.Millisecond)}, 503, boom, "1"},
		{"timeout", &mapStore{block: true}, []Option{WithStoreTimeout(time.Millisecond)}, 0, context.DeadlineExceeded, ""},
		{"negative cost", &mapStore{}, []Option{WithFailClosed(), WithCost(func(keyfuncs.Request) int64 { return -1 })}, 503, core.ErrInvalidCost, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []error
			hook := errorsTo(&got)
			p, _ := newPolicy(t, tt.store, core.GCRA, core.PerMinute(1), nil, append(tt.opts, hook)...)
			o := p.decideNow(context.Background(), get("a"))
			must.Len(t, got, 1)
			expect.ErrorIs(t, got[0], tt.is)
			expect.False(t, o.decided)
			if tt.status == 0 {
				expect.Equal(t, actionPass, o.action)
				expect.Zero(t, o.numHeaders())
				return
			}
			expect.Equal(t, tt.status, o.response.Status)
			expect.Equal(t, "Service Unavailable\n", string(o.response.Body))
			expect.Equal(t, map[string]string{HeaderRetryAfter: tt.retry}, headersOf(o), "a 503 says when to come back, and nothing else")
		})
	}
}

func TestDecideSkipAndCost(t *testing.T) {
	skip := WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" })
	cost := WithCost(func(r keyfuncs.Request) int64 {
		if r.Method() == "POST" {
			return 3
		}
		return 1
	})
	p, _ := newPolicy(t, &mapStore{}, core.TokenBucket, core.PerMinute(4), nil, skip, cost)
	ctx := context.Background()
	health := get("a")
	health.path = "/health"
	for range 10 {
		o := p.decideNow(ctx, health)
		must.Equal(t, actionPass, o.action)
		must.False(t, o.decided)
	}
	post := get("a")
	post.method = "POST"
	expect.Equal(t, "1", headersOf(p.decideNow(ctx, post))["X-Ratelimit-Remaining"])
	expect.Equal(t, "0", headersOf(p.decideNow(ctx, get("a")))["X-Ratelimit-Remaining"])
	expect.Equal(t, 429, p.decideNow(ctx, get("a")).response.Status)
}

func TestDecideResponder(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil,
		WithResponder(func(_ keyfuncs.Request, d core.Decision) Response {
			return Response{ContentType: "text/html", Body: []byte("<p>slow down</p>")}
		}))
	p.decideNow(context.Background(), get("a"))
	o := p.decideNow(context.Background(), get("a"))
	expect.Equal(t, 429, o.response.Status)
	expect.Equal(t, "text/html", o.response.ContentType)
	expect.Equal(t, "<p>slow down</p>", string(o.response.Body))
	expect.Equal(t, "60", headersOf(o)["Retry-After"])
}

// WithResponder and WithDeniedHandler set the same answer: the later one
// given is the one used, whichever comes first.
func TestDenialOptionsReplaceEachOther(t *testing.T) {
	responder := WithResponder(func(keyfuncs.Request, core.Decision) Response {
		return Response{Body: []byte("from the responder")}
	})
	handler := WithDeniedHandler(func(ResponseWriter, keyfuncs.Request, core.Decision) {})
	denial := func(opts ...Option) *outcome {
		p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil, opts...)
		p.decideNow(context.Background(), get("a"))
		return p.decideNow(context.Background(), get("a"))
	}
	o := denial(handler, responder)
	must.NotNil(t, o.response, "the responder came last")
	expect.Equal(t, "from the responder", string(o.response.Body))
	expect.Nil(t, denial(responder, handler).response, "the handler came last: Handle calls it")
}

func TestDecideLeakyBucketDelay(t *testing.T) {
	l := core.PerSecond(1).WithBurst(5)
	p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, l, nil, WithMaxDelay(2*time.Second))
	ctx := context.Background()
	var delays []time.Duration
	for range 3 {
		o := p.decideNow(ctx, get("a"))
		must.Equal(t, actionPass, o.action)
		delays = append(delays, o.decision.Delay)
	}
	expect.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, delays)
	o := p.decideNow(ctx, get("a"))
	expect.Equal(t, 429, o.response.Status, "a delay above the max is refused")
	expect.Equal(t, "3", headersOf(o)["Retry-After"])
}
