package echomw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/echomw"
)

// The one-line form limits per client IP and refuses a malformed literal at
// once.
func TestPerIP(t *testing.T) {
	e := echo.New()
	e.Use(echomw.PerIP("2/m"))
	e.GET("/", func(c echo.Context) error { return c.NoContent(200) })
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes = append(codes, rec.Code)
	}
	assert.Equal(t, []int{200, 200, 429}, codes)
	assert.Panics(t, func() { echomw.PerIP("2 per minute") })
}
