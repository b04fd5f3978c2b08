package core_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
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

// localStore is a mapStore that says it decides in process.
type localStore struct{ mapStore }

func (*localStore) Local() bool { return true }

// fakeReq is a core.HTTPRequest over plain fields.
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

func get(addr string, kv ...string) *fakeReq {
	r := &fakeReq{addr: addr, method: "GET", path: "/", h: http.Header{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.h.Set(kv[i], kv[i+1])
	}
	return r
}

func peerKey(r core.HTTPRequest) (string, error) { return r.RemoteAddr(), nil }

func apiKey(r core.HTTPRequest) (string, error) {
	if k := r.Header("X-Api-Key"); k != "" {
		return k, nil
	}
	return "", core.ErrKey
}

var httpT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newPolicy(t *testing.T, st core.Store, alg core.Algorithm, l core.Limit, lopts []core.Option, opts ...core.HTTPOption) (*core.HTTPPolicy, *core.ManualClock) {
	t.Helper()
	clk := core.NewManualClock(httpT0)
	lim, err := core.NewLimiter(st, alg, l, append([]core.Option{core.WithClock(clk)}, lopts...)...)
	require.NoError(t, err)
	p, err := core.NewHTTPPolicy(lim, append([]core.HTTPOption{core.WithKeyFunc(peerKey)}, opts...)...)
	require.NoError(t, err)
	return p, clk
}

func headerMap(o *core.HTTPOutcome) map[string]string {
	m := map[string]string{}
	for i := range o.NumHeaders() {
		name, vals := o.Header(i)
		m[name] = vals[0]
	}
	return m
}

func TestNewHTTPPolicyRejectsBadInput(t *testing.T) {
	lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(10))
	require.NoError(t, err)
	badName, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(10).Named("caf\u00e9"))
	require.NoError(t, err)
	key := core.WithKeyFunc(peerKey)
	tests := []struct {
		name string
		lim  *core.Limiter
		opts []core.HTTPOption
	}{
		{"nil limiter", nil, []core.HTTPOption{key}},
		{"no key func", lim, nil},
		{"nil option", lim, []core.HTTPOption{key, nil}},
		{"nil key func", lim, []core.HTTPOption{core.WithKeyFunc(nil)}},
		{"nil fallback", lim, []core.HTTPOption{key, core.WithKeyFallback(nil)}},
		{"nil key responder", lim, []core.HTTPOption{key, core.WithKeyErrorResponder(nil)}},
		{"nil responder", lim, []core.HTTPOption{key, core.WithResponder(nil)}},
		{"nil error handler", lim, []core.HTTPOption{key, core.WithErrorHandler(nil)}},
		{"nil skip", lim, []core.HTTPOption{key, core.WithSkip(nil)}},
		{"nil cost", lim, []core.HTTPOption{key, core.WithCost(nil)}},
		{"negative timeout", lim, []core.HTTPOption{key, core.WithStoreTimeout(-time.Second)}},
		{"zero max delay", lim, []core.HTTPOption{key, core.WithMaxDelay(0)}},
		{"unknown header set", lim, []core.HTTPOption{key, core.WithHeaders(8)}},
		{"non-ASCII limit name", badName, []core.HTTPOption{key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := core.NewHTTPPolicy(tt.lim, tt.opts...)
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.Nil(t, p)
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
		o := p.Decide(ctx, get("192.0.2.1"))
		require.Equal(t, core.HTTPPass, o.Action, "request %d", i)
		assert.Equal(t, map[string]string{
			"X-Ratelimit-Limit":     "2",
			"X-Ratelimit-Remaining": w.remaining,
			"X-Ratelimit-Reset":     w.reset,
			"Ratelimit-Policy":      `"default";q=2;w=60`,
			"Ratelimit":             `"default";r=` + w.remaining + ";t=" + w.reset,
		}, headerMap(o))
	}
	clk.Advance(15 * time.Second)
	o := p.Decide(ctx, get("192.0.2.1"))
	require.Equal(t, core.HTTPRespond, o.Action)
	assert.Equal(t, 429, o.Response.Status)
	assert.Equal(t, core.ContentTypeTextPlain, o.Response.ContentType)
	assert.Equal(t, "Too Many Requests\n", string(o.Response.Body))
	assert.Equal(t, map[string]string{
		"Retry-After":           "45",
		"X-Ratelimit-Limit":     "2",
		"X-Ratelimit-Remaining": "0",
		"X-Ratelimit-Reset":     "45",
		"Ratelimit-Policy":      `"default";q=2;w=60`,
		"Ratelimit":             `"default";r=0;t=45`,
	}, headerMap(o))

	o = p.Decide(ctx, get("192.0.2.1", "Accept", "application/json"))
	assert.Equal(t, core.ContentTypeProblemJSON, o.Response.ContentType)
	assert.JSONEq(t, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
		"title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,
		"violated-policies":["default"]}`, string(o.Response.Body))

	head := get("192.0.2.1", "Accept", "application/json")
	head.method = "HEAD"
	o = p.Decide(ctx, head)
	assert.Equal(t, 429, o.Response.Status)
	assert.Nil(t, o.Response.Body)

	o = p.Decide(ctx, get("192.0.2.2"))
	assert.Equal(t, core.HTTPPass, o.Action, "another key has its own quota")
}

func TestDecideTwoLimitsNamesTheGoverningOne(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerSecond(5),
		[]core.Option{core.WithLimit(core.PerHour(2).Named("hourly"))})
	ctx := context.Background()
	o := p.Decide(ctx, get("a"))
	assert.Equal(t, `"default";q=5;w=1, "hourly";q=2;w=3600`, headerMap(o)["Ratelimit-Policy"])
	assert.Equal(t, `"hourly";r=1;t=1800`, headerMap(o)["Ratelimit"])
	p.Decide(ctx, get("a"))
	o = p.Decide(ctx, get("a", "Accept", "application/problem+json"))
	require.Equal(t, 429, o.Response.Status)
	assert.Contains(t, string(o.Response.Body), `"violated-policies":["hourly"]`)
	assert.Equal(t, "1800", headerMap(o)["Retry-After"])
}

func TestDecideHeaderToggles(t *testing.T) {
	tests := []struct {
		name         string
		opts         []core.HTTPOption
		allowed, all []string
	}{
		{"default", nil,
			[]string{"Ratelimit", "Ratelimit-Policy", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
			[]string{"Ratelimit", "Ratelimit-Policy", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
		{"ietf only", []core.HTTPOption{core.WithHeaders(core.IETFHeaders)},
			[]string{"Ratelimit", "Ratelimit-Policy"}, []string{"Ratelimit", "Ratelimit-Policy", "Retry-After"}},
		{"x only", []core.HTTPOption{core.WithHeaders(core.XRateLimitHeaders)},
			[]string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
			[]string{"Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
		{"none", []core.HTTPOption{core.WithHeaders(0)}, []string{}, []string{"Retry-After"}},
		{"denied only", []core.HTTPOption{core.WithoutHeadersOnAllowed()}, []string{},
			[]string{"Ratelimit", "Ratelimit-Policy", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &mapStore{}, core.TokenBucket, core.PerMinute(1), nil, tt.opts...)
			names := func(o *core.HTTPOutcome) []string {
				out := []string{}
				for i := range o.NumHeaders() {
					name, _ := o.Header(i)
					out = append(out, name)
				}
				return out
			}
			assert.ElementsMatch(t, tt.allowed, names(p.Decide(context.Background(), get("a"))))
			assert.ElementsMatch(t, tt.all, names(p.Decide(context.Background(), get("a"))))
		})
	}
}

func TestDecideKeyErrors(t *testing.T) {
	custom := core.WithKeyErrorResponder(func(_ core.HTTPRequest, err error) core.HTTPResponse {
		if !errors.Is(err, core.ErrKey) {
			return core.HTTPResponse{Status: 500}
		}
		return core.HTTPResponse{Status: 403, ContentType: "text/plain", Body: []byte("no key\n")}
	})
	tests := []struct {
		name        string
		opts        []core.HTTPOption
		req         *fakeReq
		status      int
		contentType string
		body        string
	}{
		{"text", nil, get("a"), 401, core.ContentTypeTextPlain, "Unauthorized\n"},
		{"json", nil, get("a", "Accept", "application/json"), 401, core.ContentTypeProblemJSON,
			`{"type":"about:blank","title":"Unauthorized","status":401}`},
		{"custom", []core.HTTPOption{custom}, get("a"), 403, "text/plain", "no key\n"},
		{"fallback", []core.HTTPOption{core.WithKeyFallback(peerKey)}, get("a"), 0, "", ""},
		{"failing fallback", []core.HTTPOption{core.WithKeyFallback(apiKey)}, get("a"), 401, core.ContentTypeTextPlain, "Unauthorized\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim, err := core.NewLimiter(&mapStore{}, core.GCRA, core.PerMinute(1))
			require.NoError(t, err)
			p, err := core.NewHTTPPolicy(lim, append([]core.HTTPOption{core.WithKeyFunc(apiKey)}, tt.opts...)...)
			require.NoError(t, err)
			o := p.Decide(context.Background(), tt.req)
			if tt.status == 0 {
				assert.Equal(t, core.HTTPPass, o.Action)
				assert.True(t, o.Decided)
				return
			}
			assert.Equal(t, core.HTTPRespond, o.Action)
			assert.False(t, o.Decided)
			assert.Equal(t, tt.status, o.Response.Status)
			assert.Equal(t, tt.contentType, o.Response.ContentType)
			assert.Equal(t, tt.body, string(o.Response.Body))
			assert.Zero(t, o.NumHeaders())
		})
	}
}

func TestDecideLimiterErrors(t *testing.T) {
	boom := errors.New("boom: secret detail 10.0.0.7")
	tests := []struct {
		name   string
		store  *mapStore
		opts   []core.HTTPOption
		status int
		is     error
	}{
		{"fail open", &mapStore{fail: boom}, nil, 0, boom},
		{"fail closed", &mapStore{fail: boom}, []core.HTTPOption{core.WithFailClosed()}, 503, boom},
		{"timeout", &mapStore{block: true}, []core.HTTPOption{core.WithStoreTimeout(time.Millisecond)}, 0, context.DeadlineExceeded},
		{"negative cost", &mapStore{}, []core.HTTPOption{core.WithFailClosed(), core.WithCost(func(core.HTTPRequest) int64 { return -1 })}, 503, core.ErrInvalidCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []error
			hook := core.WithErrorHandler(func(_ core.HTTPRequest, err error) { got = append(got, err) })
			p, _ := newPolicy(t, tt.store, core.GCRA, core.PerMinute(1), nil, append(tt.opts, hook)...)
			o := p.Decide(context.Background(), get("a"))
			require.Len(t, got, 1)
			assert.ErrorIs(t, got[0], tt.is)
			assert.False(t, o.Decided)
			assert.Zero(t, o.NumHeaders())
			if tt.status == 0 {
				assert.Equal(t, core.HTTPPass, o.Action)
				return
			}
			assert.Equal(t, tt.status, o.Response.Status)
			assert.Equal(t, "Service Unavailable\n", string(o.Response.Body))
		})
	}
}

func TestDecideSkipAndCost(t *testing.T) {
	skip := core.WithSkip(func(r core.HTTPRequest) bool { return r.Path() == "/health" })
	cost := core.WithCost(func(r core.HTTPRequest) int64 {
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
		o := p.Decide(ctx, health)
		require.Equal(t, core.HTTPPass, o.Action)
		require.False(t, o.Decided)
	}
	post := get("a")
	post.method = "POST"
	assert.Equal(t, "1", headerMap(p.Decide(ctx, post))["X-Ratelimit-Remaining"])
	assert.Equal(t, "0", headerMap(p.Decide(ctx, get("a")))["X-Ratelimit-Remaining"])
	assert.Equal(t, 429, p.Decide(ctx, get("a")).Response.Status)
}

func TestDecideResponder(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil,
		core.WithResponder(func(_ core.HTTPRequest, d core.Decision) core.HTTPResponse {
			return core.HTTPResponse{ContentType: "text/html", Body: []byte("<p>slow down</p>")}
		}))
	p.Decide(context.Background(), get("a"))
	o := p.Decide(context.Background(), get("a"))
	assert.Equal(t, 429, o.Response.Status)
	assert.Equal(t, "text/html", o.Response.ContentType)
	assert.Equal(t, "<p>slow down</p>", string(o.Response.Body))
	assert.Equal(t, "60", headerMap(o)["Retry-After"])
}

func TestDecideLeakyBucketDelay(t *testing.T) {
	l := core.PerSecond(1).WithBurst(5)
	p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, l, nil, core.WithMaxDelay(2*time.Second))
	ctx := context.Background()
	var delays []time.Duration
	for range 3 {
		o := p.Decide(ctx, get("a"))
		require.Equal(t, core.HTTPPass, o.Action)
		delays = append(delays, o.Decision.Delay)
	}
	assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, delays)
	o := p.Decide(ctx, get("a"))
	assert.Equal(t, 429, o.Response.Status, "a delay above the max is refused")
	assert.Equal(t, "3", headerMap(o)["Retry-After"])
}

func TestOutcomeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := core.PerSecond(1).WithBurst(5)
		p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, l, nil)
		p.Decide(context.Background(), get("a"))
		o := p.Decide(context.Background(), get("a"))
		require.Equal(t, time.Second, o.Decision.Delay)
		start := time.Now()
		assert.True(t, o.Wait(context.Background()))
		assert.Equal(t, time.Second, time.Since(start))

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start = time.Now()
		assert.False(t, o.Wait(ctx), "a client that leaves stops the wait")
		assert.Equal(t, 300*time.Millisecond, time.Since(start))
		assert.False(t, o.Wait(ctx))
	})
}

func TestDecisionFromContext(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil, core.WithDecisionInContext())
	type k struct{}
	parent := context.WithValue(context.Background(), k{}, "v")
	o := p.Decide(parent, get("a"))
	ctx := o.Context(parent)
	d, ok := core.DecisionFromContext(ctx)
	require.True(t, ok)
	assert.Equal(t, int64(2), d.Remaining)
	assert.Equal(t, "v", ctx.Value(k{}), "parent values stay visible")
	_, ok = core.DecisionFromContext(parent)
	assert.False(t, ok)
	assert.True(t, p.DecisionInContext())
	off, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil)
	assert.False(t, off.DecisionInContext(), "off by default")

	cctx, cancel := context.WithCancel(parent)
	ctx = p.Decide(cctx, get("a")).Context(cctx)
	cancel()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	<-ctx.Done()
}

func TestAcceptNegotiation(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil)
	p.Decide(context.Background(), get("a"))
	tests := []struct {
		accept string
		json   bool
	}{
		{"", false},
		{"*/*", false},
		{"text/html,application/xhtml+xml,*/*;q=0.8", false},
		{"application/json", true},
		{"APPLICATION/JSON", true},
		{"application/problem+json", true},
		{"text/plain, application/vnd.api+json;q=0.5", true},
		{"application/*", true},
		{"application/json;q=0", false},
		{"application/json; q=0.000", false},
		{"application/json;q=0.1", true},
		{"application/jsonx", false},
		{";;,,", false},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			o := p.Decide(context.Background(), get("a", "Accept", tt.accept))
			want := core.ContentTypeTextPlain
			if tt.json {
				want = core.ContentTypeProblemJSON
			}
			assert.Equal(t, want, o.Response.ContentType)
		})
	}
}

func TestStoreTimeoutSkippedForLocalStores(t *testing.T) {
	var deadline bool
	st := &localStore{}
	lim, err := core.NewLimiter(storeFunc(func(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
		_, deadline = ctx.Deadline()
		return st.Take(ctx, req)
	}), core.GCRA, core.PerMinute(1))
	require.NoError(t, err)
	p, err := core.NewHTTPPolicy(lim, core.WithKeyFunc(peerKey))
	require.NoError(t, err)
	p.Decide(context.Background(), get("a"))
	assert.True(t, deadline, "a remote store gets the default deadline")

	lim, err = core.NewLimiter(st, core.GCRA, core.PerMinute(1))
	require.NoError(t, err)
	p, err = core.NewHTTPPolicy(lim, core.WithKeyFunc(peerKey))
	require.NoError(t, err)
	r := get("b")
	allocs := testing.AllocsPerRun(100, func() { p.Decide(context.Background(), r) })
	assert.Equal(t, 1.0, allocs, "a local store gets no deadline, which would allocate")
}

type storeFunc func(context.Context, core.TakeRequest) (core.Decision, error)

func (f storeFunc) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	return f(ctx, req)
}

func TestDecideAllocations(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []core.HTTPOption
		allocs float64
	}{
		{"all headers", nil, 1},
		{"no headers", []core.HTTPOption{core.WithHeaders(0)}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &localStore{}, core.GCRA, core.PerSecond(1_000_000), nil, tt.opts...)
			r := get("192.0.2.1")
			allocs := testing.AllocsPerRun(200, func() { p.Decide(context.Background(), r) })
			assert.Equal(t, tt.allocs, allocs)
			allocs = testing.AllocsPerRun(200, func() { p.Release(p.Decide(context.Background(), r)) })
			assert.Zero(t, allocs, "released outcomes are reused")
		})
	}
}

func TestReleaseReusesOutcomes(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil, core.WithSkip(func(r core.HTTPRequest) bool { return r.Path() == "/health" }))
	health := get("a")
	health.path = "/health"
	shared := p.Decide(context.Background(), health)
	p.Release(shared) // shared outcomes are never pooled
	assert.Same(t, shared, p.Decide(context.Background(), health))

	o := p.Decide(context.Background(), get("a"))
	assert.Equal(t, int64(2), o.Decision.Remaining)
	p.Release(o)
	o = p.Decide(context.Background(), get("a"))
	assert.Equal(t, int64(1), o.Decision.Remaining, "a reused outcome starts afresh")
	assert.Equal(t, `"default";r=1;t=40`, headerMap(o)["Ratelimit"])
}

// clockStore is a mapStore that records the instant of every request.
type clockStore struct {
	mapStore
	nows []time.Time
}

func (s *clockStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	s.nows = append(s.nows, req.Now)
	return s.mapStore.Take(ctx, req)
}

// DecideAt decides at the server's arrival stamp when the limiter runs on the
// system clock, and at the limiter's own clock otherwise.
func TestDecideAtArrival(t *testing.T) {
	t.Run("system clock", func(t *testing.T) {
		st := &clockStore{}
		lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(1))
		require.NoError(t, err)
		var hook []error
		p, err := core.NewHTTPPolicy(lim, core.WithKeyFunc(peerKey), core.WithErrorHandler(func(_ core.HTTPRequest, err error) { hook = append(hook, err) }))
		require.NoError(t, err)

		arrival := time.Now().Add(-2 * time.Hour) // a monotonic reading, two hours back
		o := p.DecideAt(context.Background(), get("a"), arrival)
		require.True(t, o.Decided)
		assert.True(t, o.Decision.Allowed)
		assert.WithinDuration(t, arrival, st.nows[0], time.Millisecond, "decided at arrival")
		// Half an hour after that arrival the hour's one request is spent. At
		// the clock's now, two hours later, it would be back.
		o = p.DecideAt(context.Background(), get("a"), arrival.Add(30*time.Minute))
		assert.False(t, o.Decision.Allowed, "the hour's request was spent at arrival")
		assert.Equal(t, 30*time.Minute, st.nows[1].Sub(st.nows[0]))
		assert.Equal(t, 30*time.Minute, o.Decision.RetryAfter)

		before := time.Now()
		p.DecideAt(context.Background(), get("b"), time.Time{})
		assert.WithinDuration(t, before, st.nows[2], time.Minute, "a zero arrival reads the clock")

		// An arrival past any time a store accepts is the store's error (fail
		// open by default), never a wrapped time or a panic.
		o = p.DecideAt(context.Background(), get("c"), time.Now().AddDate(300, 0, 0))
		assert.False(t, o.Decided)
		assert.Equal(t, core.HTTPPass, o.Action)
		require.Len(t, hook, 1)
		assert.ErrorIs(t, hook[0], core.ErrClock)
	})
	t.Run("own clock", func(t *testing.T) {
		st := &clockStore{}
		p, clk := newPolicy(t, st, core.GCRA, core.PerHour(1), nil)
		p.DecideAt(context.Background(), get("a"), time.Now())
		assert.Equal(t, clk.Now(), st.nows[0], "a test's clock is never bypassed")
	})
}
