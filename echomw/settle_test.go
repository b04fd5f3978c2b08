package echomw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// refundingApp is an Echo app with a recovery that answers 200
// "recovered", then echomw counting only failures (2 a minute), then
// handler on GET /.
func refundingApp(t *testing.T, handler echo.HandlerFunc) *echo.Echo {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	require.NoError(t, err)
	mw, err := echomw.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	e := echo.New()
	recovered := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
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
	e := refundingApp(t, func(c echo.Context) error {
		if c.Request().Header.Get("X-Fail") != "" {
			return echo.NewHTTPError(http.StatusForbidden)
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
	e := refundingApp(t, func(echo.Context) error { panic("boom") })
	rec := get(e)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "recovered", rec.Body.String())
	assert.Equal(t, "1", rec.Header().Get(httplimit.HeaderXRateLimitRemain), "the cost stays spent")
	assert.Equal(t, "0", get(e).Header().Get(httplimit.HeaderXRateLimitRemain), "and the next request spends the rest")
}
