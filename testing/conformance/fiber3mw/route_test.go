package fiber3mw_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// usersRules limits /users/{id} to 2 requests a minute per client.
const usersRules = `schema: 1
version: 1
policies:
  - name: users
    match: {paths: ["/users/{id}"]}
    algorithm: fixed-window
    limits: [2/m]
`

// Fiber v3 routes on the path as sent, so a parameter takes a dot segment:
// "/users/.." reaches the handler of /users/:id. With the middleware on the
// route, the view tells the route Fiber matched, and the route's policy
// governs every spelling that reaches its handler. In app.Use the route is
// not known yet and the view says none, but the rules match a path with dot
// segments kept as well as resolved, so the route's policy governs them there
// too: once the quota is spent, each is refused and the handler does not run.
func TestTheRoutesPolicyGovernsEverySpellingItTakes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		onRoute bool
	}{
		{"middleware on the route", true},
		{"middleware in app.Use", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := memory.New(memory.WithSweepInterval(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			doc, err := rules.Parse([]byte(usersRules), "rules.yaml")
			require.NoError(t, err)
			set, err := rules.New(st, doc)
			require.NoError(t, err)
			mw, err := fiber3mw.Middleware(set)
			require.NoError(t, err)
			app := fiber.New()
			var ids []string
			handler := func(c fiber.Ctx) error {
				ids = append(ids, strings.Clone(c.Params("id")))
				return c.SendString("ok")
			}
			if tt.onRoute {
				app.Get("/users/:id", mw, handler)
			} else {
				app.Use(mw)
				app.Get("/users/:id", handler)
			}
			get := func(target string) int {
				resp, err := app.Test(httptest.NewRequest("GET", target, nil), fiber.TestConfig{})
				require.NoError(t, err)
				return resp.StatusCode
			}
			assert.Equal(t, []int{200, 200}, []int{get("/users/7"), get("/users/8")}, "the quota is spent")
			for _, spelling := range []string{"/users/..", "/users/%2E%2E", "/users/."} {
				assert.Equal(t, 429, get(spelling), spelling)
			}
			assert.Equal(t, []string{"7", "8"}, ids, "the handler ran for no other spelling")
		})
	}
}
