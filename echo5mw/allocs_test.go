//go:build !race

package echo5mw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// What the middleware adds to an Echo v5 request, in allocations, on the
// memory store with the default key (the client IP): the request view and
// its context cost nothing, so an allowed request pays only for the values
// of the rate-limit headers net/http's Header map holds (one allocation),
// and nothing with the headers off. A denied request, whose handler never
// runs, allocates as many times as the bare app's request does.
//
// The race detector's sync.Pool drops pooled values on purpose, so the counts
// hold only without it: run go test -run Alloc without -race as well.
func TestAllocationsPerRequest(t *testing.T) {
	allow, deny := core.PerSecond(1_000_000).WithBurst(1<<40), core.PerHour(1)
	for _, tt := range []struct {
		name   string
		limit  core.Limit
		opts   []httplimit.Option
		status int
		added  float64
	}{
		{"allowed", allow, nil, 200, 1},
		{"allowed, headers off", allow, []httplimit.Option{httplimit.WithHeaders(0)}, 200, 0},
		{"denied", deny, nil, 429, 0},
		{"denied, headers off", deny, []httplimit.Option{httplimit.WithHeaders(0)}, 429, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := echo5mw.New(allocLimiter(t, tt.limit), tt.opts...)
			require.NoError(t, err)
			bare, _ := allocsPerRequest(t)
			limited, status := allocsPerRequest(t, mw)
			assert.Equal(t, tt.status, status)
			assert.Equal(t, bare+tt.added, limited, "allocations with the middleware (the bare app's: %v)", bare)
		})
	}
}

// allocLimiter is a GCRA limiter of limit on a memory store.
func allocLimiter(t *testing.T, limit core.Limit) *core.Limiter {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, limit)
	require.NoError(t, err)
	return lim
}

// headerWriter is an http.ResponseWriter that keeps its header map from one
// request to the next, cleared, so that only the app's own allocations are
// counted.
type headerWriter struct {
	h      http.Header
	status int
}

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(status int)      { w.status = status }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }

// allocsPerRequest returns the allocations of one GET / from 192.0.2.1 to an
// Echo v5 app behind mw, and the last status. The first request spends a
// limit of one an hour before the count starts.
func allocsPerRequest(t *testing.T, mw ...echo.MiddlewareFunc) (float64, int) {
	e := echo.New()
	e.Use(mw...)
	e.GET("/", func(c *echo.Context) error { return c.String(200, "ok") })
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &headerWriter{h: http.Header{}}
	serve := func() {
		clear(w.h)
		w.status = 200
		e.ServeHTTP(w, req)
	}
	serve()
	return testing.AllocsPerRun(100, serve), w.status
}
