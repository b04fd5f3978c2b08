package fiber3mw_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// listen serves app on ln until the test ends.
func listen(t *testing.T, app *fiber.App, ln net.Listener) {
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	t.Cleanup(func() {
		assert.NoError(t, app.Shutdown())
		assert.NoError(t, <-done)
	})
}

// serve serves the conformance app on ln, with an authentication step that
// stores adaptertest.UserHeader with c.Locals("user", ...).
func serve(t *testing.T, ln net.Listener, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) error {
	mw, err := fiber3mw.New(lim, opts...)
	if err != nil {
		return err
	}
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		if u := c.Get(adaptertest.UserHeader); u != "" {
			c.Locals("user", u)
		}
		return c.Next()
	})
	handle := func(c fiber.Ctx) error {
		d, ok := fiber3mw.DecisionFrom(c)
		return c.SendString(h(d, ok))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		app.Get(path, mw, handle)
	}
	listen(t, app, ln)
	return nil
}

func TestRequestAccess(t *testing.T) {
	adaptertest.RunRequest(t, adaptertest.RequestAdapter{
		Key:   "user",
		Serve: serve,
		NativePath: func(r keyfuncs.Request) (string, bool) {
			c, ok := fiber3mw.Native(r)
			if !ok {
				return "", false
			}
			return c.Path(), true
		},
	})
}

type (
	ctxKey      struct{}
	requestOnly struct{}
)

// The view's context finds c.Locals' values under any comparable key, falls
// back to c.Context(), keeps its deadline and its Done channel (where the
// fiber.Ctx's own, as a context.Context, are no-ops), never panics on an
// unhashable key, and costs no allocation.
func TestContextView(t *testing.T) {
	seen := make(chan struct{}, 1)
	probe := func(r keyfuncs.Request) (string, error) {
		seen <- struct{}{}
		ctx := r.Context()
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = r.Context().Value("user") }), "the context and a lookup cost no allocation")
		assert.Equal(t, "from c.Locals", ctx.Value("user"))
		assert.Equal(t, 7, ctx.Value(ctxKey{}))
		assert.Equal(t, "from c.Context()", ctx.Value(requestOnly{}))
		assert.Nil(t, ctx.Value([]int{1}), "an unhashable key finds nothing, without panicking")
		_, hasDeadline := ctx.Deadline()
		assert.True(t, hasDeadline)
		assert.NotNil(t, ctx.Done())
		assert.NoError(t, ctx.Err())
		c, ok := fiber3mw.Native(r)
		if assert.True(t, ok) {
			assert.Equal(t, "/", c.Path())
			_, ctxHasDeadline := c.Deadline()
			assert.False(t, ctxHasDeadline, "Fiber's Ctx has no deadline of its own")
			assert.Nil(t, c.Done())
			assert.Equal(t, "from c.Locals", c.Value("user"), "the Ctx as a context.Context reads c.Locals only")
			assert.Nil(t, c.Value(requestOnly{}))
		}
		return "k", nil
	}
	mw, err := fiber3mw.New(newLimiter(t), httplimit.WithKey(probe))
	require.NoError(t, err)
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		c.Locals("user", "from c.Locals")
		c.Locals(ctxKey{}, 7)
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), requestOnly{}, "from c.Context()"), time.Minute)
		defer cancel()
		c.SetContext(ctx)
		return c.Next()
	}, mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendStatus(200) })
	ln, client := adaptertest.Listen(t, false)
	listen(t, app, ln)
	assert.Equal(t, 200, client.Get("/"))
	require.Len(t, seen, 1)
	_, ok := fiber3mw.Native(nil)
	assert.False(t, ok)
}

func newLimiter(t *testing.T) *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100))
	require.NoError(t, err)
	return lim
}

// FrameworkIP takes c.IP(): the peer, or ProxyHeader's value when Fiber v3
// trusts the peer as a proxy (TrustProxy and TrustProxyConfig). Unlike v2, a
// ProxyHeader without TrustProxy is ignored.
func TestFrameworkIP(t *testing.T) {
	trust := func(header string, tc fiber.TrustProxyConfig) fiber.Config {
		return fiber.Config{ProxyHeader: header, TrustProxy: true, TrustProxyConfig: tc}
	}
	untrusted := fiber.Config{ProxyHeader: "X-Real-Ip"}
	listed := trust("X-Real-Ip", fiber.TrustProxyConfig{Proxies: []string{"127.0.0.1"}})
	loopback := trust("X-Real-Ip", fiber.TrustProxyConfig{Loopback: true})
	otherProxy := trust("X-Real-Ip", fiber.TrustProxyConfig{Proxies: []string{"10.0.0.0/8"}})
	xff := trust("X-Forwarded-For", fiber.TrustProxyConfig{Loopback: true})
	xffValidated := xff
	xffValidated.EnableIPValidation = true
	unixTrusted := trust("X-Real-Ip", fiber.TrustProxyConfig{UnixSocket: true})
	tests := []struct {
		name      string
		cfg       fiber.Config
		unix      bool
		header    []string
		want      string
		status    int
		peerNotIP bool
	}{
		{name: "no proxy header: the peer", header: []string{"X-Real-Ip", "6.6.6.6"}, want: "127.0.0.1", status: 200},
		{name: "proxy header without TrustProxy: the peer", cfg: untrusted, header: []string{"X-Real-Ip", "6.6.6.6"}, want: "127.0.0.1", status: 200},
		{name: "proxy header from a listed proxy", cfg: listed, header: []string{"X-Real-Ip", "203.0.113.9"}, want: "203.0.113.9", status: 200},
		{name: "proxy header from a loopback proxy", cfg: loopback, header: []string{"X-Real-Ip", "203.0.113.9"}, want: "203.0.113.9", status: 200},
		{name: "proxy header from an untrusted peer", cfg: otherProxy, header: []string{"X-Real-Ip", "6.6.6.6"}, want: "127.0.0.1", status: 200},
		{name: "ipv6 grouped", cfg: listed, header: []string{"X-Real-Ip", "2001:db8:1:2::7"}, want: "2001:db8:1:2::/64", status: 200},
		{name: "an X-Forwarded-For list is not an address", cfg: xff, header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, status: 401},
		{name: "validated X-Forwarded-For: the leftmost, the client's own", cfg: xffValidated, header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, want: "6.6.6.6", status: 200},
		{name: "unix socket: fasthttp says 0.0.0.0", unix: true, header: []string{"X-Real-Ip", "203.0.113.9"}, status: 500, peerNotIP: true},
		{name: "unix socket not trusted: the proxy header ignored", cfg: listed, unix: true, header: []string{"X-Real-Ip", "203.0.113.9"}, status: 500, peerNotIP: true},
		{name: "unix socket trusted: the proxy header", cfg: unixTrusted, unix: true, header: []string{"X-Real-Ip", "203.0.113.9"}, want: "203.0.113.9", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.FrameworkIP()
			require.NoError(t, err)
			var rec adaptertest.KeyRecorder
			mw, err := fiber3mw.New(newLimiter(t), httplimit.WithKey(rec.Wrap(kf)))
			require.NoError(t, err)
			app := fiber.New(tt.cfg)
			app.Get("/", mw, func(c fiber.Ctx) error { return c.SendStatus(200) })
			ln, client := adaptertest.Listen(t, tt.unix)
			listen(t, app, ln)
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
