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
)

// Middleware runs a policy the app keeps, so that the app can reset a client
// through it; a nil policy is refused.
func TestMiddleware(t *testing.T) {
	_, err := echo5mw.Middleware(nil)
	require.ErrorIs(t, err, core.ErrInvalidOption)

	p := httplimit.MustPerIP("2/m")
	mw, err := echo5mw.Middleware(p)
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error { return c.NoContent(200) })
	get := func() int {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil)) // from 192.0.2.1
		return rec.Code
	}
	assert.Equal(t, []int{200, 200, 429}, []int{get(), get(), get()})
	require.NoError(t, p.Reset(t.Context(), "192.0.2.1"))
	assert.Equal(t, 200, get(), "a reset client starts afresh")
}

// New refuses a nil limiter and an invalid option with an error that names
// the package, and never panics.
func TestNewInvalid(t *testing.T) {
	_, err := echo5mw.New(nil)
	require.ErrorIs(t, err, core.ErrInvalidOption)
	assert.Contains(t, err.Error(), "echo5mw: ")
	_, err = echo5mw.New(newLimiter(t), httplimit.WithKey(nil))
	require.ErrorIs(t, err, core.ErrInvalidOption)
}
