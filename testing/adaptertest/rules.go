package adaptertest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// RulesBuilder builds a rule set from a rules document on st, its limiters on
// clk: rules.Parse, then rules.New(st, doc, rules.WithClock(clk)). The kit
// takes it as a function because package rules lives in a module of its own,
// which the root module does not must.
type RulesBuilder func(doc []byte, st core.Store, clk core.Clock) (httplimit.Handler, error)

// RulesDocument is the document RunRules limits the app with: on the app's
// routes, a policy per route pattern, one on writes, a dry run over
// everything, an exemption, an override that blocks a client, and a policy
// that counts only failures.
const RulesDocument = `schema: 1
version: 1
policies:
  - name: users
    match: {paths: ["/users/{id}"]}
    algorithm: fixed-window
    limits: [2/m]
    overrides:
      - {key: 198.51.100.66, blocked: true}
  - name: writes
    match: {paths: ["/users/{id}"], methods: [POST]}
    algorithm: fixed-window
    limits: [1/m]
  - name: site
    match: {prefixes: [/]}
    algorithm: fixed-window
    limits: [3/m]
    dry_run: true
  - name: failures
    match: {paths: ["/"], methods: [POST]}
    algorithm: fixed-window
    limits: [1/m]
    count: failures
  - name: health
    match: {paths: [/health]}
    unlimited: true
    replaces: [site]
`

// RunRules runs the rule-driven conformance table against a, whose
// Middleware field must be set: every adapter must give the same answers to
// the same requests under RulesDocument.
func RunRules(t *testing.T, a Adapter, build RulesBuilder) {
	must.NotNil(t, a.Middleware, "Adapter.Middleware")
	e := newEnv(t)
	st, err := memory.New(memory.WithSweepInterval(0))
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h, err := build([]byte(RulesDocument), st, e.clk)
	must.NoError(t, err)
	srv, err := a.Middleware(t, h, func(d core.Decision, ok bool) string {
		e.calls.Add(1)
		return Body(d, ok)
	})
	must.NoError(t, err)
	if srv.Close != nil {
		t.Cleanup(srv.Close)
	}
	e.srv = srv
	for _, step := range rulesScript {
		t.Run(step.name, func(t *testing.T) {
			got := e.do(step.method, step.path, step.peer, step.kv...)
			expect.Equal(t, step.status, got.Status)
			for name, want := range step.headers {
				expect.Equal(t, want, got.Headers[name], name)
			}
		})
	}
	expect.Equal(t, int64(7), e.calls.Load(), "the handler ran for every request let through, and only for those")
	checkNoSpellingWalksAround(t, e)
}

// routeSpellings are other spellings of GET /users/7 that some framework
// routes to the handler of /users/{id}: a trailing slash, case, empty and dot
// segments, an encoded unreserved character, and HEAD; paths that Echo gives
// whole to the route's last parameter (":id" takes "7/extra", "7/x/",
// "7/%2E%2E", "%2E%2E/x"), where the rules' {id} is one segment of the
// normalised path; and a dot segment that Echo, Gin and Fiber take as the
// parameter's value, which the rules would resolve to "/".
var routeSpellings = []struct{ method, path string }{
	{"GET", "/users/7/"}, {"GET", "/USERS/7"}, {"GET", "/Users/7/"}, {"GET", "//users/7"}, {"GET", "/users//7"},
	{"GET", "/users/./7"}, {"GET", "/x/../users/7"}, {"GET", "/users/%37"}, {"GET", "/%75sers/7"}, {"HEAD", "/users/7"},
	{"GET", "/users/7/extra"}, {"GET", "/users/7/x/"}, {"GET", "/users/7/%2E%2E"}, {"GET", "/users/%2E%2E/x"},
	{"POST", "/users/7/extra"}, {"HEAD", "/users/7/x"},
	{"GET", "/users/%2E%2E"}, {"GET", "/users/.."}, {"GET", "/users/%2e"}, {"GET", "/users/."},
}

// checkNoSpellingWalksAround spends a client's quota on /users/7, then sends
// each other spelling of it: whatever the framework's router does with the
// spelling, the client is refused (429), redirected to a path that is
// (3xx), or routed nowhere (404, where the middleware is on the routes
// themselves), and the handler never runs. A router that redirects the
// spelling out of /users/ (net/http's ServeMux cleans "/users/.." to "/")
// sends it to no handler of /users/{id}: the client follows the redirect to
// another route, whose handler may run.
func checkNoSpellingWalksAround(t *testing.T, e *env) {
	for i, sp := range routeSpellings {
		t.Run("no way around the route's policy: "+sp.method+" "+sp.path, func(t *testing.T) {
			peer := fmt.Sprintf("203.0.113.%d:1", i+1)
			for range 2 {
				must.Equal(t, 200, e.do("GET", "/users/7", peer).Status, "the quota is spent")
			}
			before := e.calls.Load()
			resp, err := e.send(context.Background(), sp.method, sp.path, peer)
			must.NoError(t, err)
			must.NoError(t, resp.Body.Close())
			if final := resp.Request; final != nil && final.Response != nil && !strings.HasPrefix(strings.ToLower(final.URL.Path), "/users/") {
				expect.GreaterOrEqual(t, final.Response.StatusCode, 300, "redirected to %s", final.URL.Path)
				return
			}
			expect.GreaterOrEqual(t, resp.StatusCode, 300, "refused (429), redirected, or routed nowhere (404)")
			if resp.StatusCode == 429 {
				expect.Contains(t, resp.Header.Get(httplimit.HeaderRateLimit), `"users";r=0;`)
			}
			expect.Equal(t, before, e.calls.Load(), "the handler did not run")
		})
	}
}

// rulesScript is RunRules' script: each request in order, and what its
// answer must be (the headers listed; "" for a header that must be absent).
var rulesScript = []struct {
	name, method, path, peer string
	kv                       []string
	status                   int
	headers                  map[string]string
}{
	{"a route pattern's policy and the site's", "GET", "/users/1", peerA, nil, 200, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"users";q=2;w=60, "site";q=3;w=60`,
		httplimit.HeaderRateLimit:       `"users";r=1;t=60, "site";r=2;t=60`,
		httplimit.HeaderXRateLimitLimit: "2",
	}},
	{"a write adds its policy", "POST", "/users/2", peerA, nil, 200, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"users";q=2;w=60, "writes";q=1;w=60, "site";q=3;w=60`,
		httplimit.HeaderRateLimit:       `"users";r=0;t=60, "writes";r=0;t=60, "site";r=1;t=60`,
	}},
	{"the first policy to deny answers, naming itself", "POST", "/users/3", peerA, nil, 429, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"users";q=2;w=60, "writes";q=1;w=60, "site";q=3;w=60`,
		httplimit.HeaderRateLimit:       `"users";r=0;t=60`,
		httplimit.HeaderRetryAfter:      "60",
	}},
	{"the site's quota runs out", "GET", "/", peerA, nil, 200, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"site";q=3;w=60`,
		httplimit.HeaderRateLimit:       `"site";r=0;t=60`,
	}},
	{"a dry run's denial goes on, with the truth and no Retry-After", "GET", "/", peerA, nil, 200, map[string]string{
		httplimit.HeaderRateLimit:  `"site";r=0;t=60`,
		httplimit.HeaderRetryAfter: "",
	}},
	{"an exemption replaces the site's policy", "GET", "/health", peerA, nil, 200, map[string]string{
		httplimit.HeaderRateLimitPolicy: "",
	}},
	{"a blocked client's quota is 0", "GET", "/users/1", "198.51.100.66:1", nil, 429, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"users/override";q=0;w=60, "site";q=3;w=60`,
		httplimit.HeaderXRateLimitLimit: "0",
	}},
	{"a success is given back", "POST", "/", peerB, nil, 200, map[string]string{
		httplimit.HeaderRateLimitPolicy: `"site";q=3;w=60, "failures";q=1;w=60`,
	}},
	{"so a failure still passes", "POST", "/", peerB, []string{StatusHeader, "401"}, 401, nil},
	{"and the next failure is denied", "POST", "/", peerB, nil, 429, map[string]string{
		httplimit.HeaderRateLimit: `"failures";r=0;t=60`,
	}},
}
