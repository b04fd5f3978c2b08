package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/ginmw"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// The one-line form limits per client IP and refuses a malformed literal at
// once.
func TestPerIP(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(ginmw.PerIP("2/m"))
	r.GET("/", func(c *gin.Context) { c.Status(200) })
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes = append(codes, rec.Code)
	}
	assert.Equal(t, []int{200, 200, 429}, codes)
	assert.Panics(t, func() { ginmw.PerIP("2 per minute") })
}
