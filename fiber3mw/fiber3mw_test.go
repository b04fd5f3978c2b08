package fiber3mw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/fiber3mw"
)

// The one-line form limits per client IP and refuses a malformed literal at
// once.
func TestPerIP(t *testing.T) {
	app := fiber.New()
	app.Use(fiber3mw.PerIP("2/m"))
	app.Get("/", func(c fiber.Ctx) error { return c.SendStatus(200) })
	var codes []int
	for range 3 {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil), fiber.TestConfig{})
		require.NoError(t, err)
		codes = append(codes, resp.StatusCode)
		_ = resp.Body.Close()
	}
	assert.Equal(t, []int{200, 200, 429}, codes)
	assert.Panics(t, func() { fiber3mw.PerIP("2 per minute") })
}
