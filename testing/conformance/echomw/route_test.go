package echomw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// routeApp is an Echo app with mw on every route: GET on "/users/:id" and
// "/files/*", and on POST "/login"; its handlers count their calls.
func routeApp(mw echo.MiddlewareFunc, calls *int) *echo.Echo {
	e := echo.New()
	e.Use(mw)
	handle := func(c echo.Context) error {
		*calls++
		return c.String(http.StatusOK, "ok")
	}
	e.GET("/users/:id", handle)
	e.GET("/files/*", handle)
	e.POST("/login", handle)
	return e
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
	mw, err := echomw.Middleware(set)
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
