package echo5mw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
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

// routeDocument limits each client to two requests a minute on the route
// "/users/{id}".
const routeDocument = `schema: 1
version: 1
policies:
  - name: users
    match: {paths: ["/users/{id}"]}
    algorithm: fixed-window
    limits: [2/m]
`

// Every path Echo's router sends to the handler of /users/:id is governed
// by the route's policy: once /users/7 has spent the quota, a raw dot
// segment (which the rules resolve to "/"), a "..", and the rest of a path
// that Echo gives the parameter are refused, and the handler never runs.
func TestRoutePolicyGovernsEveryPathTheRouterSends(t *testing.T) {
	doc, err := rules.Parse([]byte(routeDocument), "rules.yaml")
	require.NoError(t, err)
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	set, err := rules.New(st, doc, rules.WithClock(core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	mw, err := echo5mw.Middleware(set)
	require.NoError(t, err)
	var calls int
	e := routeApp(mw, &calls)
	for range 2 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", "/users/7", nil))
		require.Equal(t, http.StatusOK, rec.Code)
	}
	for _, target := range []string{"/users/%2E%2E", "/users/..", "/users/7/..", "/users/%2E%2E/%2E%2E/x", "/users/7/extra", "/users/7/x/"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code, target)
		assert.Contains(t, rec.Header().Get(httplimit.HeaderRateLimit), `"users";r=0;`, target)
	}
	assert.Equal(t, 2, calls, "the handler ran for the two requests let through only")
}
