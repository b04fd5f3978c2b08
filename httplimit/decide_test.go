package httplimit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func TestOutcomeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := core.PerSecond(1).WithBurst(5)
		p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, l, nil)
		p.decideNow(context.Background(), get("a"))
		o := p.decideNow(context.Background(), get("a"))
		must.Equal(t, time.Second, o.decision.Delay)
		start := time.Now()
		expect.True(t, o.wait(context.Background(), nil))
		expect.Equal(t, time.Second, time.Since(start))

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start = time.Now()
		expect.False(t, o.wait(ctx, nil), "a client that leaves stops the wait")
		expect.Equal(t, 300*time.Millisecond, time.Since(start))
		expect.False(t, o.wait(ctx, nil))
	})
}

func TestDecisionFromContext(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil, WithDecisionInContext())
	type k struct{}
	parent := context.WithValue(context.Background(), k{}, "v")
	o := p.decideNow(parent, get("a"))
	ctx := o.asContext(parent)
	d, ok := DecisionFromContext(ctx)
	must.True(t, ok)
	expect.Equal(t, int64(2), d.Remaining)
	expect.Equal(t, "v", ctx.Value(k{}), "parent values stay visible")
	_, ok = DecisionFromContext(parent)
	expect.False(t, ok)
	expect.True(t, p.inContext)
	off, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil)
	expect.False(t, off.inContext, "off by default")

	cctx, cancel := context.WithCancel(parent)
	ctx = p.decideNow(cctx, get("a")).asContext(cctx)
	cancel()
	expect.ErrorIs(t, ctx.Err(), context.Canceled)
	<-ctx.Done()
}

func TestAcceptNegotiation(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(1), nil)
	p.decideNow(context.Background(), get("a"))
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
			o := p.decideNow(context.Background(), get("a", "Accept", tt.accept))
			want := ContentTypeTextPlain
			if tt.json {
				want = ContentTypeProblemJSON
			}
			expect.Equal(t, want, o.response.ContentType)
		})
	}
}

func TestStoreTimeoutSkippedForLocalStores(t *testing.T) {
	var deadline bool
	st := &localMapStore{}
	lim, err := core.NewLimiter(storeFunc(func(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
		_, deadline = ctx.Deadline()
		return st.Take(ctx, req)
	}), core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	p, err := New(lim, WithKey(peerKey))
	must.NoError(t, err)
	p.decideNow(context.Background(), get("a"))
	expect.True(t, deadline, "a remote store gets the default deadline")

	lim, err = core.NewLimiter(st, core.GCRA, core.PerMinute(1))
	must.NoError(t, err)
	p, err = New(lim, WithKey(peerKey))
	must.NoError(t, err)
	r := get("b")
	allocs := testing.AllocsPerRun(100, func() { p.decideNow(context.Background(), r) })
	expect.Equal(t, 1.0, allocs, "a local store gets no deadline, which would allocate")
}

type storeFunc func(context.Context, core.TakeRequest) (core.Decision, error)

func (f storeFunc) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	return f(ctx, req)
}

func TestDecideAllocations(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []Option
		allocs float64
	}{
		{"all headers", nil, 1},
		{"no headers", []Option{WithHeaders(0)}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &localMapStore{}, core.GCRA, core.PerSecond(1_000_000), nil, tt.opts...)
			r := get("192.0.2.1")
			allocs := testing.AllocsPerRun(200, func() { p.decideNow(context.Background(), r) })
			expect.Equal(t, tt.allocs, allocs)
			allocs = testing.AllocsPerRun(200, func() { p.release(p.decideNow(context.Background(), r)) })
			expect.Zero(t, allocs, "released outcomes are reused")
		})
	}
}

func TestReleaseReusesOutcomes(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.GCRA, core.PerMinute(3), nil, WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/health" }))
	health := get("a")
	health.path = "/health"
	shared := p.decideNow(context.Background(), health)
	p.release(shared) // shared outcomes are never pooled
	expect.Same(t, shared, p.decideNow(context.Background(), health))

	o := p.decideNow(context.Background(), get("a"))
	expect.Equal(t, int64(2), o.decision.Remaining)
	p.release(o)
	o = p.decideNow(context.Background(), get("a"))
	expect.Equal(t, int64(1), o.decision.Remaining, "a reused outcome starts afresh")
	expect.Equal(t, `"default";r=1;t=40`, headersOf(o)["Ratelimit"])
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

// decide decides at the server's arrival stamp when the limiter runs on the
// system clock, and at the limiter's own clock otherwise.
func TestDecideAtArrival(t *testing.T) {
	t.Run("system clock", func(t *testing.T) {
		st := &clockStore{}
		lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(1))
		must.NoError(t, err)
		var hook []error
		p, err := New(lim, WithKey(peerKey), errorsTo(&hook))
		must.NoError(t, err)

		arrival := time.Now().Add(-2 * time.Hour) // a monotonic reading, two hours back
		o := p.decideAt(get("a"), arrival)
		must.True(t, o.decided)
		expect.True(t, o.decision.Allowed)
		expect.WithinDuration(t, arrival, st.nows[0], time.Millisecond, "decided at arrival")
		// Half an hour after that arrival the hour's one request is spent. At
		// the clock's now, two hours later, it would be back.
		o = p.decideAt(get("a"), arrival.Add(30*time.Minute))
		expect.False(t, o.decision.Allowed, "the hour's request was spent at arrival")
		expect.Equal(t, 30*time.Minute, st.nows[1].Sub(st.nows[0]))
		expect.Equal(t, 30*time.Minute, o.decision.RetryAfter)

		before := time.Now()
		p.decideAt(get("b"), time.Time{})
		expect.WithinDuration(t, before, st.nows[2], time.Minute, "a zero arrival reads the clock")

		// An arrival past any time a store accepts is the store's error (fail
		// open by default), never a wrapped time or a panic.
		o = p.decideAt(get("c"), time.Now().AddDate(300, 0, 0))
		expect.False(t, o.decided)
		expect.Equal(t, actionPass, o.action)
		must.Len(t, hook, 1)
		expect.ErrorIs(t, hook[0], core.ErrClock)
	})
	t.Run("own clock", func(t *testing.T) {
		st := &clockStore{}
		p, clk := newPolicy(t, st, core.GCRA, core.PerHour(1), nil)
		p.decideAt(get("a"), time.Now())
		expect.Equal(t, clk.Now(), st.nows[0], "a test's clock is never bypassed")
	})
}
