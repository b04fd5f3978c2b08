package servertest

import (
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/rules"
)

// The keys of examples/rules.yaml's API.
const (
	apiKey     = "X-API-Key"
	blockedKey = "leaked-key-0001"
)

// request is one request of a table and what its response must hold.
type request struct {
	name    string
	method  string
	path    string
	headers []string
	status  int
	body    string // the body, exactly; "" to skip
	// policy is the RateLimit-Policy field, exactly; "" for no rate-limit
	// header at all.
	policy string
	// rateLimit prefixes the RateLimit field; "" to skip.
	rateLimit string
}

// check sends r's request to s and checks its response.
func (r request) check(t *testing.T, s *Server) Response {
	t.Helper()
	resp := s.Do(t, r.method, r.path, r.headers...)
	assert.Equal(t, r.status, resp.Status, "status")
	if r.body != "" {
		assert.Equal(t, r.body, resp.Body)
	}
	if r.policy == "" {
		AssertNoRateLimitHeaders(t, resp, "no policy applies")
	} else {
		assert.Equal(t, r.policy, resp.Header.Get("RateLimit-Policy"))
	}
	if r.rateLimit != "" {
		assert.True(t, strings.HasPrefix(resp.Header.Get("RateLimit"), r.rateLimit), "RateLimit %q, want it to start with %q", resp.Header.Get("RateLimit"), r.rateLimit)
	}
	return resp
}

// The answers of a server with -rules examples/rules.yaml and -metrics that
// do not depend on one another: routes, tiers, the blocked key, the dry run,
// and the paths no policy matches, which get no rate-limit header.
var rulesRequests = []request{
	{name: "root: no policy", method: http.MethodGet, path: "/", status: 200, body: "ok\n"},
	{name: "healthz: exempt", method: http.MethodGet, path: flags.HealthPath, status: 200, body: "healthy\n"},
	{name: "metrics: never limited", method: http.MethodGet, path: flags.MetricsPath, status: 200},
	{name: "unknown path: 404, no policy", method: http.MethodGet, path: "/nope", status: 404, body: "Not Found\n"},
	{name: "unknown method on a route: 404", method: http.MethodPut, path: "/", status: 404},
	{name: "items, free tier", method: http.MethodGet, path: flags.ItemsPath, headers: []string{apiKey, "k-free"},
		status: 200, body: "items 1, 2, 3\n", policy: `"api/free";q=100;w=1`, rateLimit: `"api/free";r=99;`},
	{name: "item, paid tier", method: http.MethodGet, path: "/api/items/7", headers: []string{apiKey, "k-paid", "X-Plan", "paid"},
		status: 200, body: "item 7\n", policy: `"api/paid";q=1000;w=1`, rateLimit: `"api/paid";r=999;`},
	{name: "unknown plan: the default tier", method: http.MethodGet, path: flags.ItemsPath, headers: []string{apiKey, "k-gold", "X-Plan", "gold"},
		status: 200, policy: `"api/free";q=100;w=1`},
	{name: "item deleted: api and the dry-run writes", method: http.MethodDelete, path: "/api/items/9", headers: []string{apiKey, "k-del"},
		status: 200, body: "item 9 deleted\n", policy: `"api/free";q=100;w=1, "api-writes";q=10;w=60`},
	{name: "no API key: 401", method: http.MethodGet, path: flags.ItemsPath, status: 401},
	{name: "unknown route under the API: limited, then 404", method: http.MethodPatch, path: flags.ItemsPath, headers: []string{apiKey, "k-patch"},
		status: 404, policy: `"api/free";q=100;w=1, "api-writes";q=10;w=60`},
	{name: "blocked key: 429, quota 0", method: http.MethodGet, path: flags.ItemsPath, headers: []string{apiKey, blockedKey},
		status: 429, policy: `"api/override";q=0;w=1`, rateLimit: `"api/override";r=0;`},
}

// RulesMode starts a server with -rules (a copy of examples/rules.yaml) and
// -metrics, and checks every route and policy: rulesRequests, the login
// counting only failures, the dry-run writes, and edits of the file taking
// effect (or refused) without a restart.
func RulesMode(t *testing.T, start Start) {
	path := CopyRules(t, "rules.yaml")
	s := StartServer(t, start, "-rules", path, "-metrics")
	first := s.WaitReload(t)
	require.NoError(t, first.Err)
	assert.Equal(t, int64(1), first.Version)
	for _, r := range rulesRequests {
		t.Run(r.name, func(t *testing.T) { r.check(t, s) })
	}
	t.Run("login counts failures only", func(t *testing.T) { checkLogin(t, s) })
	t.Run("writes in a dry run are never denied", func(t *testing.T) { checkDryRun(t, s) })
	t.Run("a file edit takes effect without a restart", func(t *testing.T) { checkEdit(t, s, path) })
	t.Run("metrics name the policies", func(t *testing.T) {
		metrics := s.Do(t, http.MethodGet, flags.MetricsPath)
		for _, line := range []string{
			`ratewarden_decisions_total{outcome="denied",policy="login"} 1`,
			`ratewarden_decisions_total{outcome="blocked",policy="login"} 1`,
			`ratewarden_decisions_total{outcome="refunded",policy="login"} 3`,
			`ratewarden_decisions_total{outcome="dry_run_denied",policy="api-writes"} 1`,
			`ratewarden_decisions_total{outcome="key_error",policy="api/free"} 1`,
			`ratewarden_decisions_total{outcome="allowed",policy="api/paid"} 1`,
		} {
			assert.True(t, slices.Contains(strings.Split(metrics.Body, "\n"), line), "no metrics line %s", line)
		}
	})
}

// checkLogin: a right password is admitted and given back before its
// headers go out, so they show the quota whole and any number of them never
// locks out; 5 wrong ones a minute are, then the sixth is 429, named login,
// and starts the policy's 15 minutes of penalty box (block_for), so a right
// one after it is refused too, with the block's end in Retry-After.
func checkLogin(t *testing.T, s *Server) {
	right := []string{flags.PasswordHeader, flags.RulesPassword}
	wrong := []string{flags.PasswordHeader, "guess"}
	for i := range 3 {
		resp := s.Do(t, http.MethodPost, flags.LoginPath, right...)
		assert.Equal(t, 200, resp.Status, "right password %d", i+1)
		assert.Equal(t, `"login";q=5;w=60`, resp.Header.Get("RateLimit-Policy"))
		assert.Equal(t, "5", resp.Header.Get("X-RateLimit-Remaining"), "right password %d: given back before its headers went out", i+1)
	}
	for i := range 5 {
		resp := s.Do(t, http.MethodPost, flags.LoginPath, wrong...)
		assert.Equal(t, 401, resp.Status, "wrong password %d", i+1)
	}
	for _, h := range [][]string{wrong, right} {
		resp := s.Do(t, http.MethodPost, flags.LoginPath, h...)
		assert.Equal(t, 429, resp.Status, "after 5 failures")
		assert.True(t, strings.HasPrefix(resp.Header.Get("RateLimit"), `"login";r=0;`), "RateLimit %q names login", resp.Header.Get("RateLimit"))
		assert.Equal(t, "900", resp.Header.Get("Retry-After"), "the penalty box's 15 minutes")
	}
}

// checkDryRun: the eleventh write of a key in a minute is over api-writes'
// 10/m, which says so in its headers but lets it through.
func checkDryRun(t *testing.T, s *Server) {
	key := []string{apiKey, "k-writer"}
	var last Response
	for i := range 11 {
		last = s.Do(t, http.MethodPost, flags.ItemsPath, key...)
		require.Equal(t, 201, last.Status, "write %d", i+1)
	}
	assert.Equal(t, "item 4 created\n", last.Body)
	assert.Contains(t, last.Header.Get("RateLimit"), `"api-writes";r=0;`)
}

// checkEdit saves a new version of the file with a higher free tier, which
// the next request sees, then a broken one, which is refused, logged, and
// leaves the new version in force.
func checkEdit(t *testing.T, s *Server, path string) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(strings.Replace(string(raw), "version: 1\n", "version: 2\n", 1), "free: [100/s]", "free: [200/s]", 1)
	require.NotEqual(t, string(raw), edited)
	SaveFile(t, path, []byte(edited))
	r := s.WaitReload(t)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(2), r.Version)
	request{method: http.MethodGet, path: flags.ItemsPath, headers: []string{apiKey, "k-after-edit"},
		status: 200, policy: `"api/free";q=200;w=1`}.check(t, s)

	SaveFile(t, path, []byte(strings.Replace(edited, "version: 2\n", "version: 3\n", 1)+"  - {name: broken, limits: [10/x]}\n"))
	r = s.WaitReload(t)
	require.ErrorIs(t, r.Err, rules.ErrInvalidRules)
	assert.Equal(t, int64(2), r.Version, "the rules in force stay")
	request{method: http.MethodGet, path: flags.ItemsPath, headers: []string{apiKey, "k-after-refusal"},
		status: 200, policy: `"api/free";q=200;w=1`}.check(t, s)
	log := s.Log.String()
	assert.Contains(t, log, `msg="ratewarden: rules loaded" source=`+path+" version=2\n")
	assert.Contains(t, log, `msg="ratewarden: rules refused; the rules in force stay"`)
	kept, err := rules.Parse([]byte(edited), path) // the broken policy comes after its policies
	require.NoError(t, err)
	assert.Contains(t, log, `policies[`+strconv.Itoa(len(kept.Policies))+`].limits[0]`)
}
