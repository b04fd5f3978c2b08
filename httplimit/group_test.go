package httplimit

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// groupOf returns policies on one memory store and clock, named and limited
// as given (per minute), keyed by the peer address.
func groupOf(t *testing.T, limits map[string]int64, order []string, opts map[string][]Option) ([]*Policy, *core.ManualClock) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(httpT0)
	var ps []*Policy
	for _, name := range order {
		lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(limits[name]).Named(name),
			core.WithClock(clk), core.WithNamespace(name))
		must.NoError(t, err)
		p, err := New(lim, append([]Option{WithKey(peerKey)}, opts[name]...)...)
		must.NoError(t, err)
		ps = append(ps, p)
	}
	return ps, clk
}

func serveGroup(g *Group, r keyfuncs.Request) (*httptest.ResponseRecorder, Pass, bool) {
	w := httptest.NewRecorder()
	pass, next := g.Handle(context.Background(), r, w)
	return w, pass, next
}

// remaining peeks key's remaining quota under p.
func remaining(t *testing.T, p *Policy, key string) int64 {
	t.Helper()
	d, err := p.Peek(context.Background(), "", key)
	must.NoError(t, err)
	return d.Remaining
}

func TestNewGroupRefusesBadInput(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"a": 1}, []string{"a"}, nil)
	_, err := NewGroup()
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = NewGroup(ps[0], nil)
	expect.ErrorIs(t, err, core.ErrInvalidOption)
	expect.ErrorIs(t, CheckHandler(nil), core.ErrInvalidOption)
	expect.ErrorIs(t, CheckHandler((*Policy)(nil)), core.ErrInvalidOption)
	expect.ErrorIs(t, CheckHandler((*Group)(nil)), core.ErrInvalidOption)
	expect.NoError(t, CheckHandler(ps[0]))
}

// No policy: the request goes on bare. One: exactly what the policy alone
// does. Nil entries from a careless caller are skipped.
func TestGroupWithNoneOrOnePolicy(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"a": 5}, []string{"a"}, nil)
	w := httptest.NewRecorder()
	_, next := HandleAll(context.Background(), fakereq.New("192.0.2.1:1"), w, []*Policy{nil, nil})
	expect.True(t, next)
	expect.Empty(t, w.Header())

	w = httptest.NewRecorder()
	_, next = HandleAll(context.Background(), fakereq.New("192.0.2.1:1"), w, []*Policy{nil, ps[0], nil})
	expect.True(t, next)
	expect.Equal(t, `"a";q=5;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, `"a";r=4;t=12`, w.Header().Get(HeaderRateLimit))
}

// Every policy decides; the lists name them all, X-RateLimit the tightest.
func TestGroupAllowedListsEveryPolicy(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"wide": 100, "tight": 3}, []string{"wide", "tight"}, nil)
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	w, _, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	must.True(t, next)
	expect.Equal(t, `"wide";q=100;w=60, "tight";q=3;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, `"wide";r=99;t=1, "tight";r=2;t=20`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, "3", w.Header().Get(HeaderXRateLimitLimit))
	expect.Equal(t, "2", w.Header().Get(HeaderXRateLimitRemain))
	expect.Equal(t, int64(99), remaining(t, ps[0], "192.0.2.1:1"))
}

// A denial by a later policy gives back what the earlier ones spent and asks
// none after it; the answer names the policy that denied.
func TestGroupDenialSpendsNothingElsewhere(t *testing.T) {
	rec := &recorder{}
	obs := map[string][]Option{"first": {WithObserver(rec)}}
	ps, _ := groupOf(t, map[string]int64{"first": 10, "deny": 1, "last": 10}, []string{"first", "deny", "last"}, obs)
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	_, _, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	must.True(t, next)
	w, _, next := serveGroup(g, fakereq.New("192.0.2.1:1", "Accept", "application/json"))
	must.False(t, next)
	expect.Equal(t, 429, w.Code)
	expect.Equal(t, `"first";q=10;w=60, "deny";q=1;w=60, "last";q=10;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, `"deny";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, "60", w.Header().Get(HeaderRetryAfter))
	expect.Contains(t, w.Body.String(), `"violated-policies":["deny"]`)
	expect.Equal(t, int64(9), remaining(t, ps[0], "192.0.2.1:1"), "the denied request's spend was given back")
	expect.Equal(t, int64(9), remaining(t, ps[2], "192.0.2.1:1"), "the policy after the denial was not asked")
	expect.Equal(t, []Outcome{OutcomeAllowed, OutcomeAllowed, OutcomeRefunded}, rec.outcomes())
}

// A key error or a failed-closed store in one policy answers the request and
// gives back the others' spend, like a denial.
func TestGroupKeyErrorRollsBack(t *testing.T) {
	noKey := WithKey(func(r keyfuncs.Request) (string, error) {
		if r.Header("X-Key") == "" {
			return "", keyfuncs.ErrKey
		}
		return r.Header("X-Key"), nil
	})
	ps, _ := groupOf(t, map[string]int64{"ip": 10, "apikey": 10}, []string{"ip", "apikey"}, map[string][]Option{"apikey": {noKey}})
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	w, _, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	expect.False(t, next)
	expect.Equal(t, 401, w.Code)
	expect.Empty(t, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, int64(10), remaining(t, ps[0], "192.0.2.1:1"))
}

// A dry-run policy's denial lets the request go on, and shows in the fields.
func TestGroupDryRunMemberNeverDenies(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"real": 10, "trial": 1}, []string{"real", "trial"}, map[string][]Option{"trial": {WithDryRun()}})
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	for range 2 {
		_, _, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
		must.True(t, next)
	}
	w, _, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	expect.True(t, next)
	expect.Equal(t, 200, w.Code)
	expect.Equal(t, `"real";r=7;t=18, "trial";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, "0", w.Header().Get(HeaderXRateLimitRemain), "the dry run's would-be denial governs")
	expect.Empty(t, w.Header().Get(HeaderRetryAfter))
}

// Each member refunds under its own WithRefund once the handler answered.
func TestGroupRefundsAfterTheHandler(t *testing.T) {
	failuresOnly := WithRefund(func(status int) bool { return status < 400 })
	ps, _ := groupOf(t, map[string]int64{"login": 5, "all": 5}, []string{"login", "all"}, map[string][]Option{"login": {failuresOnly}})
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	_, pass, next := serveGroup(g, fakereq.New("192.0.2.1:1"))
	must.True(t, next)
	must.True(t, pass.WantsStatus())
	pass.Finish(200)
	expect.Equal(t, int64(5), remaining(t, ps[0], "192.0.2.1:1"), "a success is given back")
	expect.Equal(t, int64(4), remaining(t, ps[1], "192.0.2.1:1"), "the policy without WithRefund keeps it")
	_, pass, _ = serveGroup(g, fakereq.New("192.0.2.1:1"))
	pass.Finish(401)
	expect.Equal(t, int64(4), remaining(t, ps[0], "192.0.2.1:1"), "a failure counts")
}

// headerSetter is a ResponseWriter that takes its headers in one call, as
// fibermw's does.
type headerSetter struct {
	got    map[string]string
	status int
}

func (h *headerSetter) SetHeaders(hs Headers) {
	h.got = map[string]string{}
	for i := range hs.Len() {
		name, value := hs.At(i)
		h.got[name] = value
	}
}
func (h *headerSetter) WriteHeader(status int)      { h.status = status }
func (h *headerSetter) Write(b []byte) (int, error) { return len(b), nil }

// A HeaderSetter gets the group's lists too.
func TestGroupListsThroughAHeaderSetter(t *testing.T) {
	ps, _ := groupOf(t, map[string]int64{"a": 2, "b": 1}, []string{"a", "b"}, nil)
	g, err := NewGroup(ps...)
	must.NoError(t, err)
	w := &headerSetter{}
	_, next := g.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	must.True(t, next)
	expect.Equal(t, `"a";q=2;w=60, "b";q=1;w=60`, w.got[HeaderRateLimitPolicy])
	expect.Equal(t, `"a";r=1;t=30, "b";r=0;t=60`, w.got[HeaderRateLimit])
	w = &headerSetter{}
	_, next = g.Handle(context.Background(), fakereq.New("192.0.2.1:1"), w)
	must.False(t, next)
	expect.Equal(t, 429, w.status)
	expect.Equal(t, `"b";r=0;t=60`, w.got[HeaderRateLimit])
	expect.Equal(t, `"a";q=2;w=60, "b";q=1;w=60`, w.got[HeaderRateLimitPolicy])
}
