package servertest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

// Classic starts a server without -rules, limited to 5 requests a minute per
// IP, and checks its routes: the health check is never limited, and every
// other request, a 404 among them, counts.
func Classic(t *testing.T, start Start) {
	s := StartServer(t, start, "-limit", "5/m")
	const policy = `"default";q=5;w=60`
	steps := []struct {
		name   string
		send   func(t *testing.T) Response
		status int
		policy string
	}{
		{"healthz: never limited", func(t *testing.T) Response { return s.Do(t, http.MethodGet, flags.HealthPath) }, 200, ""},
		{"login, right password", func(t *testing.T) Response { return s.PostForm(t, flags.LoginPath, "password="+flags.DemoPassword) }, 200, policy},
		{"login, wrong password", func(t *testing.T) Response { return s.PostForm(t, flags.LoginPath, "password=guess") }, 401, policy},
		{"unknown path: 404, counted", func(t *testing.T) Response { return s.Do(t, http.MethodGet, "/nope") }, 404, policy},
		{"unknown method: 404, counted", func(t *testing.T) Response { return s.Do(t, http.MethodDelete, flags.LoginPath) }, 404, policy},
		{"root, the fifth", func(t *testing.T) Response { return s.Do(t, http.MethodGet, "/") }, 200, policy},
		{"root, the sixth: 429", func(t *testing.T) Response { return s.Do(t, http.MethodGet, "/") }, 429, policy},
		{"healthz still answers", func(t *testing.T) Response { return s.Do(t, http.MethodGet, flags.HealthPath) }, 200, ""},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			resp := step.send(t)
			assert.Equal(t, step.status, resp.Status)
			if step.policy == "" {
				AssertNoRateLimitHeaders(t, resp, step.name)
			} else {
				assert.Equal(t, step.policy, resp.Header.Get("RateLimit-Policy"))
			}
		})
	}
}
