package echo5mw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// routeApp is an Echo app with mw on every route: GET on "/users/:id" and
// "/files/*", and on POST "/login"; its handlers count their calls.
func routeApp(mw echo.MiddlewareFunc, calls *int) *echo.Echo {
	e := echo.New()
	e.Use(mw)
	handle := func(c *echo.Context) error {
		*calls++
		return c.String(http.StatusOK, "ok")
	}
	e.GET("/users/:id", handle)
	e.GET("/files/*", handle)
	e.POST("/login", handle)
	return e
}

// The view tells the route Echo's router matched, as registered, whatever
// the path (Echo gives the last parameter the rest of it), and "" when it
// matched none: a 404, and a 405, where Echo v5 leaves the route's path in
// c.Path().
func TestMatchedRoute(t *testing.T) {
	var seen []string
	mw, err := echo5mw.New(newLimiter(t), httplimit.WithKey(func(r keyfuncs.Request) (string, error) {
		mr, ok := r.(keyfuncs.MatchedRouteRequest)
		require.True(t, ok, "the view implements keyfuncs.MatchedRouteRequest")
		seen = append(seen, mr.MatchedRoute())
		return "k", nil
	}))
	require.NoError(t, err)
	var calls int
	e := routeApp(mw, &calls)
	tests := []struct{ method, target, route string }{
		{"GET", "/users/7", "/users/:id"},
		{"GET", "/users/7/x/", "/users/:id"},
		{"GET", "/users/%2E%2E", "/users/:id"},
		{"HEAD", "/users/7", ""}, // Echo v5 answers 405: no HEAD route
		{"GET", "/files/a/b", "/files/*"},
		{"GET", "/nowhere", ""},
		{"DELETE", "/users/7", ""}, // 405
		{"GET", "/login", ""},      // 405
	}
	for _, tt := range tests {
		seen = nil
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		assert.Equal(t, []string{tt.route}, seen, "%s %s (answered %d)", tt.method, tt.target, rec.Code)
	}
	assert.Equal(t, 4, calls)
}
