package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// routeApp is a Gin engine with mw on every route: GET on "/users/:id" and
// "/files/*path", and POST "/login", answering 405 for a path routed under
// another method; its handlers count their calls.
func routeApp(mw gin.HandlerFunc, calls *int) *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(mw)
	handle := func(c *gin.Context) {
		*calls++
		c.String(http.StatusOK, "ok")
	}
	r.GET("/users/:id", handle)
	r.GET("/files/*path", handle)
	r.POST("/login", handle)
	return r
}

// The view tells the route Gin's router matched, as registered, whatever
// the path (Gin routes "/users/.." to "/users/:id"), and "" when it matched
// none: a 404 and a 405. Gin redirects a trailing slash before any
// middleware runs.
func TestMatchedRoute(t *testing.T) {
	var seen []string
	mw, err := ginmw.New(newLimiter(t), httplimit.WithKey(func(r keyfuncs.Request) (string, error) {
		mr, ok := r.(keyfuncs.MatchedRouteRequest)
		require.True(t, ok, "the view implements keyfuncs.MatchedRouteRequest")
		seen = append(seen, mr.MatchedRoute())
		return "k", nil
	}))
	require.NoError(t, err)
	var calls int
	r := routeApp(mw, &calls)
	tests := []struct {
		method, target string
		status         int
		seen           []string
	}{
		{"GET", "/users/7", 200, []string{"/users/:id"}},
		{"GET", "/users/%2E%2E", 200, []string{"/users/:id"}},
		{"GET", "/users/..", 200, []string{"/users/:id"}},
		{"GET", "/files/a/b", 200, []string{"/files/*path"}},
		{"GET", "/users/7/x", 404, []string{""}},
		{"GET", "/nowhere", 404, []string{""}},
		{"DELETE", "/users/7", 405, []string{""}},
		{"GET", "/login", 405, []string{""}},
		{"GET", "/users/7/", 301, nil}, // redirected before the middleware
	}
	for _, tt := range tests {
		seen = nil
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		assert.Equal(t, tt.status, rec.Code, "%s %s", tt.method, tt.target)
		assert.Equal(t, tt.seen, seen, "%s %s", tt.method, tt.target)
	}
	assert.Equal(t, 4, calls)
}
