package echo5mw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// refundingApp is an Echo app with a recovery that answers 200
// "recovered", then echo5mw counting only failures (2 a minute), then
// handler on GET /.
func refundingApp(t *testing.T, handler echo.HandlerFunc) *echo.Echo {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	require.NoError(t, err)
	mw, err := echo5mw.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	e := echo.New()
	recovered := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) (err error) {
			defer func() {
				if recover() != nil {
					err = c.String(http.StatusOK, "recovered")
				}
			}()
			return next(c)
		}
	}
	e.Use(recovered, mw)
	e.GET("/", handler)
	return e
}

// get sends GET / to e and returns the response.
func get(e *echo.Echo) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec
}

// An error that Echo's error handler answers after the middleware returned
// is settled for its status: its headers, written later, tell the refund,
// or what a failure spent.
func TestRefundOfAnErrorEchoAnswers(t *testing.T) {
	e := refundingApp(t, func(c *echo.Context) error {
		if c.Request().Header.Get("X-Fail") != "" {
			return echo.NewHTTPError(http.StatusForbidden, "forbidden")
		}
		return echo.NewHTTPError(http.StatusAccepted, "queued")
	})
	rec := get(e)
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Equal(t, "2", rec.Header().Get(httplimit.HeaderXRateLimitRemain))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Fail", "1")
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, r)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "1", rec.Header().Get(httplimit.HeaderXRateLimitRemain))
}

// A handler that panics gets no refund, even when a recovery answers with
// a status the predicate would refund: the response's hook settles nothing
// once the middleware is gone.
func TestPanicGetsNoRefund(t *testing.T) {
	e := refundingApp(t, func(*echo.Context) error { panic("boom") })
	rec := get(e)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "recovered", rec.Body.String())
	assert.Equal(t, "1", rec.Header().Get(httplimit.HeaderXRateLimitRemain), "the cost stays spent")
	assert.Equal(t, "0", get(e).Header().Get(httplimit.HeaderXRateLimitRemain), "and the next request spends the rest")
}

// opaqueWriter hides the *echo.Response it wraps: it does not unwrap.
type opaqueWriter struct{ http.ResponseWriter }

// Behind a writer that does not unwrap to the *echo.Response, no hook can
// settle before the headers: the refund still happens once the handler
// returned, as Finish gives it.
func TestRefundBehindAWriterThatDoesNotUnwrap(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	defer st.Close()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2))
	require.NoError(t, err)
	mw, err := echo5mw.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			c.SetResponse(opaqueWriter{c.Response()})
			return next(c)
		}
	}, mw)
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusOK, "ok") })
	for range 3 {
		assert.Equal(t, http.StatusOK, get(e).Code)
	}
	d, err := lim.Peek(t.Context(), "192.0.2.1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Remaining, "every success was given back")
}
