package flags

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// reloadWait bounds a wait for a reload: it ends when the reload hook is
// called.
const reloadWait = 10 * time.Second

// rulesServer is a setup built with -rules, behind stdhttp's middleware.
type rulesServer struct {
	setup   *Setup
	log     *lockedBuffer
	reloads chan rules.Reload
	handler http.Handler
	status  int // what the handler behind the limiter answers
}

// startRules parses args, builds the setup with its error log and reloads
// kept, and puts its limiter in front of a handler that answers s.status.
func startRules(t *testing.T, args ...string) *rulesServer {
	t.Helper()
	c, err := Parse("ex", args, &bytes.Buffer{})
	require.NoError(t, err)
	s := &rulesServer{log: &lockedBuffer{}, reloads: make(chan rules.Reload, 16), status: http.StatusOK}
	c.ErrorLog = s.log
	c.OnReload = func(r rules.Reload) { s.reloads <- r }
	s.setup, err = c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.setup.Close()) })
	h, err := s.setup.Handler()
	require.NoError(t, err)
	mw, err := stdhttp.Middleware(h)
	require.NoError(t, err)
	s.handler = mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(s.status) }))
	return s
}

// do sends r through the limiter and returns the response.
func (s *rulesServer) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, r)
	return rec
}

// get sends GET path from remote with the headers given as name, value pairs.
func (s *rulesServer) get(path, remote string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return s.do(r)
}

// waitReload returns the next reload of the rules.
func (s *rulesServer) waitReload(t *testing.T) rules.Reload {
	t.Helper()
	select {
	case r := <-s.reloads:
		return r
	case <-time.After(reloadWait):
		require.FailNow(t, "no reload", "within %s; the error log:\n%s", reloadWait, s.log)
		return rules.Reload{}
	}
}

// The flags other than -rules apply to every policy of the document.
func TestBuildRulesOtherFlags(t *testing.T) {
	oneAMinute := writeRules(t, "rules.yaml", rulesDoc(1, "1/m"))
	const client, proxy = "198.51.100.9:4000", "10.0.0.1:4000"
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, s *rulesServer)
	}{
		{"as the document says", nil, func(t *testing.T, s *rulesServer) {
			assert.Equal(t, 200, s.get("/", client).Code)
			assert.Equal(t, 429, s.get("/", client).Code)
		}},
		{"-dry-run: every policy dry", []string{"-dry-run"}, func(t *testing.T, s *rulesServer) {
			assert.Equal(t, 200, s.get("/", client).Code)
			rec := s.get("/", client)
			assert.Equal(t, 200, rec.Code)
			assert.True(t, strings.HasPrefix(rec.Header().Get("RateLimit"), `"api";r=0;`), rec.Header().Get("RateLimit"))
		}},
		{"-count-only-failures: successes given back", []string{"-count-only-failures"}, func(t *testing.T, s *rulesServer) {
			for i := range 3 {
				assert.Equal(t, 200, s.get("/", client).Code, "success %d", i+1)
			}
			s.status = http.StatusUnauthorized
			assert.Equal(t, 401, s.get("/", client).Code)
			assert.Equal(t, 429, s.get("/", client).Code)
		}},
		{"-trusted-proxies: the forwarded client is the ip key", []string{"-trusted-proxies", "10.0.0.0/8"}, func(t *testing.T, s *rulesServer) {
			assert.Equal(t, 200, s.get("/", proxy, "X-Forwarded-For", "203.0.113.7").Code)
			assert.Equal(t, 429, s.get("/", proxy, "X-Forwarded-For", "203.0.113.7").Code)
			assert.Equal(t, 200, s.get("/", proxy, "X-Forwarded-For", "203.0.113.8").Code, "another client behind the proxy")
		}},
		{"-metrics: /metrics never limited", []string{"-metrics"}, func(t *testing.T, s *rulesServer) {
			for range 3 {
				rec := s.get(MetricsPath, client)
				assert.Equal(t, 200, rec.Code)
				assert.Empty(t, rec.Header().Get("RateLimit-Policy"))
			}
			assert.Equal(t, 200, s.get("/", client).Code)
			assert.Equal(t, 429, s.get("/", client).Code)
			rec := httptest.NewRecorder()
			s.setup.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
			assert.Contains(t, rec.Body.String(), `ratewarden_decisions_total{outcome="denied",policy="api"} 1`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startRules(t, append([]string{"-rules", oneAMinute}, tt.args...)...)
			tt.check(t, s)
		})
	}
}

// With the store down, -fail closed answers 503 under every policy, and
// -fail open lets each fail as its document says: open unless it says
// closed. The error log says which.
func TestBuildRulesFailMode(t *testing.T) {
	down := redistest.StartLocal(t)
	down.Stop(t)
	doc := writeRules(t, "rules.yaml", "schema: 1\nversion: 1\npolicies:\n"+
		"  - {name: open, match: {prefixes: [/open]}, limits: [5/m]}\n"+
		"  - {name: closed, match: {prefixes: [/closed]}, limits: [5/m], fail: closed}\n")
	tests := []struct {
		fail       string
		open, shut int
		logged     string
	}{
		{"open", 200, 503, "rate limiter error (failing open unless its policy says closed)"},
		{"closed", 503, 503, "rate limiter error (failing closed)"},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			s := startRules(t, "-rules", doc, "-store", "redis://"+down.Addr(), "-fail", tt.fail)
			assert.Equal(t, tt.open, s.get("/open", "192.0.2.1:1").Code)
			assert.Equal(t, tt.shut, s.get("/closed", "192.0.2.1:1").Code)
			assert.Contains(t, s.log.String(), tt.logged)
		})
	}
}

// -jwt-secret verifies the tokens whose plan claim picks the API's tier in
// examples/rules-jwt.yaml; a request without a valid token is the default
// tier.
func TestBuildRulesJWTTiers(t *testing.T) {
	s := startRules(t, "-rules", strings.Replace(exampleRules, "rules.yaml", "rules-jwt.yaml", 1), "-jwt-secret", secret32)
	token := func(secret, plan string) string {
		tok, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{"sub": "alice", "plan": plan}).SignedString([]byte(secret))
		require.NoError(t, err)
		return "Bearer " + tok
	}
	tests := []struct {
		name, auth, policy string
	}{
		{"paid token", token(secret32, "paid"), `"api/paid";q=1000;w=1`},
		{"free token", token(secret32, "free"), `"api/free";q=100;w=1`},
		{"no token", "", `"api/free";q=100;w=1`},
		{"paid token signed with another secret", token(strings.Repeat("x", 32), "paid"), `"api/free";q=100;w=1`},
		{"a plan the tiers do not name", token(secret32, "gold"), `"api/free";q=100;w=1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headers := []string{"X-API-Key", "k-" + tt.name}
			if tt.auth != "" {
				headers = append(headers, "Authorization", tt.auth)
			}
			rec := s.get(ItemsPath, "192.0.2.1:1", headers...)
			assert.Equal(t, 200, rec.Code)
			assert.Equal(t, tt.policy, rec.Header().Get("RateLimit-Policy"))
		})
	}
}

// A rules file that cannot be used stops the server with exit status 1 and
// says why: every problem, a line each, or the flag it needs.
func TestLoadRulesRefused(t *testing.T) {
	broken := writeRules(t, "broken.yaml", "schema: 1\nversion: 1\npolicies:\n  - {name: api, limits: [100/x]}\n  - {name: api, limits: [5/m], dry_rn: true}\n")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"every problem", []string{"-rules", broken}, []string{
			"ex: " + broken + ":4:26: policies[0].limits[0]: ratewarden: invalid limit",
			"\n" + broken + `:5:12: policies[1].name: duplicate policy name "api"`,
			"\n" + broken + `:5:32: policies[1]: unknown field "dry_rn"`,
		}},
		{"a jwt claim without -jwt-secret", []string{"-rules", strings.Replace(exampleRules, "rules.yaml", "rules-jwt.yaml", 1)}, []string{
			"no rules.WithClaimKey", "(give -jwt-secret, the secret that verifies the tokens)",
		}},
		{"not YAML", []string{"-rules", writeRules(t, "garbage.yaml", "\x00\x01 not: [yaml")}, []string{"ex: ", "garbage.yaml:"}},
		{"empty", []string{"-rules", writeRules(t, "empty.yaml", "")}, []string{"ex: ", "empty.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 1, code)
			for _, want := range tt.want {
				assert.Contains(t, stderr.String(), want)
			}
		})
	}
}

// SIGHUP reads the rules file again, changed or not, and the reload is
// logged; the signal does not end the process.
func TestReloadOnHangup(t *testing.T) {
	path := writeRules(t, "rules.yaml", rulesDoc(1, "1/m"))
	s := startRules(t, "-rules", path)
	first := s.waitReload(t)
	require.NoError(t, first.Err)
	stop := s.setup.ReloadOnHangup()
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	r := s.waitReload(t)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(1), r.Version)
	assert.Equal(t, 2, strings.Count(s.log.String(), `msg="ratewarden: rules loaded" source=`+path+" version=1\n"))
}

// Without -rules, ReloadOnHangup has nothing to do and returns a stop that
// does nothing.
func TestReloadOnHangupWithoutRules(t *testing.T) {
	s, _ := build(t, "-limit", "1/m")
	s.ReloadOnHangup()()
	assert.Nil(t, s.Rules)
}

// The start line says where the rules come from and which are in force.
func TestSetupStringRules(t *testing.T) {
	path := writeRules(t, "rules.yaml", rulesDoc(3, "1/m"))
	s := startRules(t, "-rules", path, "-dry-run")
	assert.Equal(t, "rules "+path+", counters on memory, failing open unless its policy says closed, dry run (nothing denied) (version 3, 1 policies)", s.setup.String())
	var out bytes.Buffer
	ln, err := s.setup.Listen(&out)
	require.NoError(t, err)
	defer ln.Close()
	assert.Contains(t, out.String(), "(version 3, 1 policies); listening on http://")
}
