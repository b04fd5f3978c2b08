package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// refundingEngine is a Gin engine with a recovery that answers 200
// "recovered", then ginmw counting only failures (2 a minute), then route;
// it returns the engine and where the middleware before ginmw records the
// writer it sees once the handlers returned.
func refundingEngine(t *testing.T, route gin.HandlerFunc) (*gin.Engine, *gin.ResponseWriter) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	require.NoError(t, err)
	mw, err := ginmw.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	r := gin.New()
	after := new(gin.ResponseWriter)
	recovered := gin.CustomRecovery(func(c *gin.Context, _ any) { c.String(http.StatusOK, "recovered") })
	r.Use(recovered, func(c *gin.Context) {
		c.Next()
		*after = c.Writer
	}, mw)
	r.GET("/", route)
	return r, after
}

// The headers Gin sends after the handlers (a status set, nothing written)
// tell the refund; the middleware hands Gin's writer back.
func TestRefundSettledWhenGinWritesTheHeaders(t *testing.T) {
	var during gin.ResponseWriter
	r, after := refundingEngine(t, func(c *gin.Context) {
		during = c.Writer
		c.Status(http.StatusAccepted)
	})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Equal(t, "2", rec.Header().Get(httplimit.HeaderXRateLimitRemain))
	assert.NotSame(t, during, *after, "the handler wrote through the settling writer, the middleware before saw Gin's")
	_, ok := http.ResponseWriter(during).(interface{ Unwrap() http.ResponseWriter })
	assert.True(t, ok, "the settling writer unwraps, for http.ResponseController")
}

// A handler that panics gets no refund, even when the recovery answers
// with a status the predicate would refund: the recovery writes through
// Gin's writer again.
func TestPanicGetsNoRefund(t *testing.T) {
	r, _ := refundingEngine(t, func(*gin.Context) { panic("boom") })
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "recovered", rec.Body.String())
	assert.Equal(t, "1", rec.Header().Get(httplimit.HeaderXRateLimitRemain), "the cost stays spent")
	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, "0", rec.Header().Get(httplimit.HeaderXRateLimitRemain), "and the next request spends the rest")
}
