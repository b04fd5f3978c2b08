package echo5mw_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// serve serves the conformance app on ln, with an authentication step that
// stores adaptertest.UserHeader with c.Set("user", ...).
func serve(t *testing.T, ln net.Listener, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) error {
	mw, err := echo5mw.New(lim, opts...)
	if err != nil {
		return err
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			if u := c.Request().Header.Get(adaptertest.UserHeader); u != "" {
				c.Set("user", u)
			}
			return next(c)
		}
	}, mw)
	handle := func(c *echo.Context) error {
		d, ok := echo5mw.DecisionFrom(c)
		return c.Blob(200, "text/plain; charset=utf-8", []byte(h(d, ok)))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		e.GET(path, handle)
	}
	adaptertest.ServeHTTP(t, ln, e)
	return nil
}

func TestRequestAccess(t *testing.T) {
	adaptertest.RunRequest(t, adaptertest.RequestAdapter{
		Key:   "user",
		Serve: serve,
		NativePath: func(r keyfuncs.Request) (string, bool) {
			c, ok := echo5mw.Native(r)
			if !ok {
				return "", false
			}
			return c.Request().URL.Path, true
		},
	})
}

type requestOnly struct{}

// The view's context finds c.Set's values, falls back to the request's
// context, keeps its deadline, and costs no allocation; so do the view and
// Native.
func TestContextView(t *testing.T) {
	seen := make(chan struct{}, 1)
	probe := func(r keyfuncs.Request) (string, error) {
		seen <- struct{}{}
		ctx := r.Context()
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = r.Context().Value("user") }), "the context and a lookup cost no allocation")
		assert.Zero(t, testing.AllocsPerRun(10, func() { _, _ = echo5mw.Native(r) }), "Native costs no allocation")
		assert.Equal(t, "from c.Set", ctx.Value("user"))
		assert.Equal(t, "from the request", ctx.Value(requestOnly{}))
		assert.Nil(t, ctx.Value("nothing"))
		_, hasDeadline := ctx.Deadline()
		assert.True(t, hasDeadline)
		assert.NoError(t, ctx.Err())
		assert.NotNil(t, ctx.Done())
		c, ok := echo5mw.Native(r)
		if assert.True(t, ok) {
			assert.Equal(t, "/items/:id", c.Path())
			assert.Equal(t, "7", c.Param("id"))
		}
		assert.Equal(t, "/items/:id", r.Route())
		assert.Equal(t, "/items/7", r.Path())
		return "k", nil
	}
	mw, err := echo5mw.New(newLimiter(t), httplimit.WithKey(probe))
	require.NoError(t, err)
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			c.Set("user", "from c.Set")
			ctx, cancel := context.WithTimeout(context.WithValue(c.Request().Context(), requestOnly{}, "from the request"), time.Minute)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}, mw)
	e.GET("/items/:id", func(c *echo.Context) error { return c.NoContent(200) })
	ln, client := adaptertest.Listen(t, false)
	adaptertest.ServeHTTP(t, ln, e)
	assert.Equal(t, 200, client.Get("/items/7"))
	require.Len(t, seen, 1)
	_, ok := echo5mw.Native(nil)
	assert.False(t, ok)
}

func newLimiter(t *testing.T) *core.Limiter { return limiterOf(t, "100/m") }

// limiterOf is a GCRA limiter of limit on a memory store of its own, on a
// clock that stands still.
func limiterOf(t *testing.T, limit string) *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	l, err := core.ParseLimit(limit)
	require.NoError(t, err)
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.GCRA, l, core.WithClock(clk))
	require.NoError(t, err)
	return lim
}

// FrameworkIP takes c.RealIP(): the IPExtractor's answer, or without one the
// peer (Echo v5 no longer believes the client's own X-Forwarded-For by
// default; echo.LegacyIPExtractor brings v4's behaviour back).
func TestFrameworkIP(t *testing.T) {
	tests := []struct {
		name      string
		extractor echo.IPExtractor
		unix      bool
		header    []string
		want      string
		status    int
		peerNotIP bool
	}{
		{name: "no extractor: the peer, whatever the client writes", header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, want: "127.0.0.1", status: 200},
		{name: "legacy: the leftmost X-Forwarded-For, the client's own", extractor: echo.LegacyIPExtractor(), header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, want: "6.6.6.6", status: 200},
		{name: "direct: the peer", extractor: echo.ExtractIPDirect(), header: []string{"X-Forwarded-For", "6.6.6.6"}, want: "127.0.0.1", status: 200},
		{name: "X-Forwarded-For from a trusted loopback", extractor: echo.ExtractIPFromXFFHeader(), header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, want: "203.0.113.9", status: 200},
		{name: "X-Forwarded-For from an untrusted loopback", extractor: echo.ExtractIPFromXFFHeader(echo.TrustLoopback(false)), header: []string{"X-Forwarded-For", "203.0.113.9"}, want: "127.0.0.1", status: 200},
		{name: "ipv6 grouped", extractor: echo.ExtractIPFromRealIPHeader(), header: []string{"X-Real-IP", "2001:db8:1:2::7"}, want: "2001:db8:1:2::/64", status: 200},
		{name: "junk in a header the extractor believes", extractor: echo.LegacyIPExtractor(), header: []string{"X-Forwarded-For", "unknown"}, status: 401},
		{name: "unix socket, legacy, with a header", extractor: echo.LegacyIPExtractor(), unix: true, header: []string{"X-Forwarded-For", "203.0.113.9"}, want: "203.0.113.9", status: 200},
		{name: "unix socket: Echo's XFF extractor trusts no socket peer", extractor: echo.ExtractIPFromXFFHeader(), unix: true, header: []string{"X-Forwarded-For", "203.0.113.9"}, status: 500, peerNotIP: true},
		{name: "unix socket without an extractor", unix: true, header: []string{"X-Forwarded-For", "203.0.113.9"}, status: 500, peerNotIP: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.FrameworkIP()
			require.NoError(t, err)
			var rec adaptertest.KeyRecorder
			mw, err := echo5mw.New(newLimiter(t), httplimit.WithKey(rec.Wrap(kf)))
			require.NoError(t, err)
			e := echo.New()
			e.IPExtractor = tt.extractor
			e.Use(mw)
			e.GET("/", func(c *echo.Context) error { return c.NoContent(200) })
			ln, client := adaptertest.Listen(t, tt.unix)
			adaptertest.ServeHTTP(t, ln, e)
			assert.Equal(t, tt.status, client.Get("/", tt.header...))
			key, _, err := rec.Last()
			if tt.status != http.StatusOK {
				require.ErrorIs(t, err, keyfuncs.ErrKey)
				assert.Equal(t, tt.peerNotIP, errors.Is(err, keyfuncs.ErrPeerNotIP))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, key)
		})
	}
}
