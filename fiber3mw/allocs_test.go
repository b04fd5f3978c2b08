//go:build !race

package fiber3mw_test

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/store/memory"
)

// "0 allocations per decision" on the memory store, asserted: the
// middleware, with the default key (the client IP) and every header, adds no
// allocation to a Fiber app's request, allowed or denied (its 429 answer,
// negotiated on the Accept header, included).
//
// The race detector's sync.Pool drops pooled values on purpose, so the counts
// hold only without it: run go test -run Alloc without -race as well.
func TestAllocationsPerDecision(t *testing.T) {
	allow, deny := core.PerSecond(1_000_000).WithBurst(1<<40), core.PerHour(1)
	for _, tt := range []struct {
		name   string
		limit  core.Limit
		accept string
		status int
		ctype  string
	}{
		{"allowed", allow, "*/*", 200, "text/plain; charset=utf-8"},
		{"denied, text", deny, "*/*", 429, "text/plain; charset=utf-8"},
		{"denied, JSON", deny, "application/json", 429, "application/problem+json"},
		{"denied, no Accept", deny, "", 429, "text/plain; charset=utf-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := fiber3mw.New(allocLimiter(t, tt.limit))
			require.NoError(t, err)
			bare, limited := allocsPerRequest(t, fiber.New, tt.accept), allocsPerRequest(t, fiber.New, tt.accept, mw)
			assert.Equal(t, tt.status, limited.status)
			assert.Equal(t, tt.ctype, limited.contentType)
			assert.Equal(t, bare.allocs, limited.allocs, "the middleware adds no allocation")
			assert.Zero(t, limited.allocs)
		})
	}
}

// On a custom context (fiber.NewWithCustomCtx) the handler receives an
// interface value, two words, so the view the policy gets must be boxed: one
// allocation a request, of the interface's 16 bytes, and no other.
func TestAllocationsOnACustomContext(t *testing.T) {
	mw, err := fiber3mw.New(allocLimiter(t, core.PerSecond(1_000_000).WithBurst(1<<40)))
	require.NoError(t, err)
	custom := func(cfg ...fiber.Config) *fiber.App {
		return fiber.NewWithCustomCtx(func(app *fiber.App) fiber.CustomCtx {
			return &customCtx{DefaultCtx: *fiber.NewDefaultCtx(app)}
		}, cfg...)
	}
	bare, limited := allocsPerRequest(t, custom, "*/*"), allocsPerRequest(t, custom, "*/*", mw)
	assert.Equal(t, 200, limited.status)
	assert.Equal(t, bare.allocs+1, limited.allocs, "one allocation: the view of the custom context")
}

// allocLimiter is a GCRA limiter of limit on a memory store without a
// sweeper.
func allocLimiter(t *testing.T, limit core.Limit) *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, limit)
	require.NoError(t, err)
	return lim
}

// served is what allocsPerRequest measured: allocations per request and the
// last answer's status and Content-Type.
type served struct {
	allocs      float64
	status      int
	contentType string
}

// allocsPerRequest serves GET / from one client, with accept as its Accept
// header unless empty, to a Fiber app that newApp makes, behind mw,
// on one fasthttp RequestCtx as fasthttp's server would, and returns the
// allocations per request once the first requests warmed the app and the
// store up.
func allocsPerRequest(t *testing.T, newApp func(...fiber.Config) *fiber.App, accept string, mw ...fiber.Handler) served {
	t.Helper()
	app := newApp()
	for _, m := range mw {
		app.Use(m)
	}
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("ok") })
	h := app.Handler()
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI("/")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}, nil)
	serve := func() {
		ctx.Response.Reset()
		h(ctx)
	}
	serve()
	allocs := testing.AllocsPerRun(200, serve)
	return served{allocs, ctx.Response.StatusCode(), string(ctx.Response.Header.ContentType())}
}
