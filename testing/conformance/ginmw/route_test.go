package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
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

// Every path Gin's router sends to the handler of /users/:id is governed
// by the route's policy: once /users/7 has spent the quota, a dot segment
// that Gin takes as the parameter (which the rules resolve to "/") is
// refused, and the handler never runs.
func TestRoutePolicyGovernsEveryPathTheRouterSends(t *testing.T) {
	doc, err := rules.Parse([]byte(routeDocument), "rules.yaml")
	require.NoError(t, err)
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	set, err := rules.New(st, doc, rules.WithClock(core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	mw, err := ginmw.Middleware(set)
	require.NoError(t, err)
	var calls int
	r := routeApp(mw, &calls)
	for range 2 {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", "/users/7", nil))
		require.Equal(t, http.StatusOK, rec.Code)
	}
	for _, target := range []string{"/users/%2E%2E", "/users/.."} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code, target)
		assert.Contains(t, rec.Header().Get(httplimit.HeaderRateLimit), `"users";r=0;`, target)
	}
	assert.Equal(t, 2, calls, "the handler ran for the two requests let through only")
}
