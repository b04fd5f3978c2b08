package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// Middleware runs a policy the app keeps, so that the app can reset a client
// through it; a nil policy is refused.
func TestMiddleware(t *testing.T) {
	_, err := ginmw.Middleware(nil)
	require.ErrorIs(t, err, core.ErrInvalidOption)

	p := httplimit.MustPerIP("2/m")
	mw, err := ginmw.Middleware(p)
	require.NoError(t, err)
	r := gin.New()
	r.Use(mw)
	r.GET("/", func(c *gin.Context) { c.Status(200) })
	get := func() int {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil)) // from 192.0.2.1
		return rec.Code
	}
	assert.Equal(t, []int{200, 200, 429}, []int{get(), get(), get()})
	require.NoError(t, p.Reset(t.Context(), "192.0.2.1"))
	assert.Equal(t, 200, get(), "a reset client starts afresh")
}
