package ginmw_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// serve serves the conformance app on ln, with an authentication step that
// stores adaptertest.UserHeader with c.Set("user", ...).
func serve(t *testing.T, ln net.Listener, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) error {
	mw, err := ginmw.New(lim, opts...)
	if err != nil {
		return err
	}
	r := gin.New()
	r.Use(func(c *gin.Context) {
		if u := c.GetHeader(adaptertest.UserHeader); u != "" {
			c.Set("user", u)
		}
	}, mw)
	handle := func(c *gin.Context) {
		d, ok := ginmw.DecisionFrom(c)
		c.String(200, "%s", h(d, ok))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		r.GET(path, handle)
	}
	adaptertest.ServeHTTP(t, ln, r)
	return nil
}

func TestRequestAccess(t *testing.T) {
	adaptertest.RunRequest(t, adaptertest.RequestAdapter{
		Key:   "user",
		Serve: serve,
		NativePath: func(r keyfuncs.Request) (string, bool) {
			c, ok := ginmw.Native(r)
			if !ok {
				return "", false
			}
			return c.Request.URL.Path, true
		},
	})
}

type (
	ctxKey      struct{}
	requestOnly struct{}
)

// The view's context finds c.Set's values under any comparable key, falls
// back to the request's context, keeps its deadline, never panics on an
// unhashable key, and costs no allocation.
func TestContextView(t *testing.T) {
	seen := make(chan context.Context, 1)
	probe := func(r keyfuncs.Request) (string, error) {
		ctx := r.Context()
		seen <- ctx
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = r.Context().Value("user") }), "the context and a lookup cost no allocation")
		assert.Equal(t, "from c.Set", ctx.Value("user"))
		assert.Equal(t, 7, ctx.Value(ctxKey{}), "c.Set with a key of another type")
		assert.Equal(t, "from the request", ctx.Value(requestOnly{}))
		assert.Nil(t, ctx.Value([]int{1}), "an unhashable key finds nothing, without panicking")
		c, ok := ginmw.Native(r)
		if !assert.True(t, ok) {
			return "k", nil
		}
		assert.Same(t, c, ctx.Value(gin.ContextKey))
		assert.Same(t, c.Request, ctx.Value(gin.ContextRequestKey))
		_, hasDeadline := ctx.Deadline()
		assert.True(t, hasDeadline)
		assert.NoError(t, ctx.Err())
		return "k", nil
	}
	lim := newLimiter(t)
	mw, err := ginmw.New(lim, httplimit.WithKey(probe))
	require.NoError(t, err)
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Set("user", "from c.Set")
		c.Set(ctxKey{}, 7)
		ctx, cancel := context.WithTimeout(context.WithValue(c.Request.Context(), requestOnly{}, "from the request"), time.Minute)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}, mw)
	r.GET("/", func(c *gin.Context) { c.Status(200) })
	ln, client := adaptertest.Listen(t, false)
	adaptertest.ServeHTTP(t, ln, r)
	assert.Equal(t, 200, client.Get("/"))
	require.Len(t, seen, 1)
	_, ok := ginmw.Native(nil)
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

// FrameworkIP takes c.ClientIP(): what Gin's trusted proxies make of the
// forwarding headers, over TCP and over a unix socket (which Gin always
// trusts).
func TestFrameworkIP(t *testing.T) {
	tests := []struct {
		name      string
		trusted   []string // nil: Gin's default, every peer
		noTrust   bool     // SetTrustedProxies(nil)
		unix      bool
		header    []string
		want      string
		peerNotIP bool
	}{
		{name: "default trusts every peer: the client chooses", header: []string{"X-Forwarded-For", "6.6.6.6"}, want: "6.6.6.6"},
		{name: "no trusted proxy: the peer", noTrust: true, header: []string{"X-Forwarded-For", "6.6.6.6"}, want: "127.0.0.1"},
		{name: "trusted loopback: walked from the right", trusted: []string{"127.0.0.1"}, header: []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, want: "203.0.113.9"},
		{name: "ipv6 grouped", trusted: []string{"127.0.0.1"}, header: []string{"X-Real-IP", "2001:db8:1:2::7"}, want: "2001:db8:1:2::/64"},
		{name: "unix socket with a header", unix: true, header: []string{"X-Forwarded-For", "203.0.113.9"}, want: "203.0.113.9"},
		{name: "unix socket without a header", unix: true, peerNotIP: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.FrameworkIP()
			require.NoError(t, err)
			var rec adaptertest.KeyRecorder
			mw, err := ginmw.New(newLimiter(t), httplimit.WithKey(rec.Wrap(kf)))
			require.NoError(t, err)
			r := gin.New()
			switch {
			case tt.noTrust:
				require.NoError(t, r.SetTrustedProxies(nil))
			case tt.trusted != nil:
				require.NoError(t, r.SetTrustedProxies(tt.trusted))
			}
			r.Use(mw)
			r.GET("/", func(c *gin.Context) { c.Status(200) })
			ln, client := adaptertest.Listen(t, tt.unix)
			adaptertest.ServeHTTP(t, ln, r)
			status := client.Get("/", tt.header...)
			key, _, err := rec.Last()
			if tt.peerNotIP {
				require.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
				assert.Equal(t, http.StatusInternalServerError, status)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, key)
			assert.Equal(t, 200, status)
		})
	}
}
