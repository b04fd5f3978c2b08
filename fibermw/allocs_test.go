//go:build !race

package fibermw_test

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fibermw"
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
			st, err := memory.New(memory.WithSweepInterval(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			lim, err := core.NewLimiter(st, core.GCRA, tt.limit)
			require.NoError(t, err)
			mw, err := fibermw.New(lim)
			require.NoError(t, err)
			bare, limited := allocsPerRequest(t, tt.accept), allocsPerRequest(t, tt.accept, mw)
			assert.Equal(t, tt.status, limited.status)
			assert.Equal(t, tt.ctype, limited.contentType)
			assert.Equal(t, bare.allocs, limited.allocs, "the middleware adds no allocation")
			assert.Zero(t, limited.allocs)
		})
	}
}

// served is what allocsPerRequest measured: allocations per request and the
// last answer's status and Content-Type.
type served struct {
	allocs      float64
	status      int
	contentType string
}

// allocsPerRequest serves GET / from one client, with accept as its Accept
// header unless empty, to a Fiber app behind mw,
// on one fasthttp RequestCtx as fasthttp's server would, and returns the
// allocations per request once the first requests warmed the app and the
// store up.
func allocsPerRequest(t *testing.T, accept string, mw ...fiber.Handler) served {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	for _, m := range mw {
		app.Use(m)
	}
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
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
