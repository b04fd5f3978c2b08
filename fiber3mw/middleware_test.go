package fiber3mw_test

import (
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// Middleware runs a policy the app keeps, so that the app can reset a client
// through it; a nil policy is refused.
func TestMiddleware(t *testing.T) {
	_, err := fiber3mw.Middleware(nil)
	require.ErrorIs(t, err, core.ErrInvalidOption)

	p := httplimit.MustPerIP("2/m")
	mw, err := fiber3mw.Middleware(p)
	require.NoError(t, err)
	app := fiber.New()
	app.Use(mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendStatus(200) })
	get := func() int {
		resp, err := app.Test(httptest.NewRequest("GET", "/", nil)) // from 0.0.0.0, app.Test's peer
		require.NoError(t, err)
		return resp.StatusCode
	}
	assert.Equal(t, []int{200, 200, 429}, []int{get(), get(), get()})
	require.NoError(t, p.Reset(t.Context(), "0.0.0.0"))
	assert.Equal(t, 200, get(), "a reset client starts afresh")
}
