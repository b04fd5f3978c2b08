package flags

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// tierArgs are the flags of a server whose tokens' "plan" claim picks free
// (1/m, the default) or paid (3/m).
var tierArgs = []string{"-key", "jwt", "-jwt-secret", secret32, "-tier-claim", "plan", "-tier", "free=1/m", "-tier", "paid=3/m"}

func TestParseFeatures(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c *Config)
	}{
		{"all off by default", nil, func(t *testing.T, c *Config) {
			assert.False(t, c.DryRun)
			assert.False(t, c.Metrics)
			assert.False(t, c.CountOnlyFailures)
			assert.Empty(t, c.TierClaim)
			assert.Empty(t, c.Tiers)
		}},
		{"dry run, metrics, count only failures", []string{"-dry-run", "-metrics", "-count-only-failures"}, func(t *testing.T, c *Config) {
			assert.True(t, c.DryRun)
			assert.True(t, c.Metrics)
			assert.True(t, c.CountOnlyFailures)
		}},
		{"tiers in the order given, the first as the limit", tierArgs, func(t *testing.T, c *Config) {
			assert.Equal(t, "plan", c.TierClaim)
			assert.Equal(t, []Tier{{"free", core.PerMinute(1)}, {"paid", core.PerMinute(3)}}, c.Tiers)
			assert.Equal(t, core.PerMinute(1), c.Limit)
		}},
		{"one tier, with a burst", []string{"-key", "jwt", "-jwt-secret", secret32, "-tier-claim", "plan", "-tier", "all=10/s burst 20"}, func(t *testing.T, c *Config) {
			assert.Equal(t, []Tier{{"all", core.PerSecond(10).WithBurst(20)}}, c.Tiers)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("ex", tt.args, &bytes.Buffer{})
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

// Every bad combination or value of the new flags gets exit status 2 and a
// message naming the flag.
func TestLoadBadFeatureFlags(t *testing.T) {
	jwtKey := []string{"-key", "jwt", "-jwt-secret", secret32}
	withJWT := func(args ...string) []string { return append(append([]string{}, jwtKey...), args...) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dry run with a value", []string{"-dry-run=maybe"}, "-dry-run"},
		{"metrics with a value", []string{"-metrics=often"}, "-metrics"},
		{"count only failures with a value", []string{"-count-only-failures=2"}, "-count-only-failures"},
		{"tier claim without jwt", []string{"-tier-claim", "plan", "-tier", "free=1/m"}, "-tier-claim needs -key jwt"},
		{"tier claim without tiers", withJWT("-tier-claim", "plan"), "-tier-claim needs at least one -tier"},
		{"tier without tier claim", withJWT("-tier", "free=1/m"), "-tier needs -tier-claim"},
		{"tier without a name", withJWT("-tier-claim", "plan", "-tier", "=1/m"), "the name must be"},
		{"tier without =", withJWT("-tier-claim", "plan", "-tier", "free"), "want NAME=LIMIT"},
		{"tier name with a quote", withJWT("-tier-claim", "plan", "-tier", `fr"ee=1/m`), "the name must be"},
		{"tier name with a space", withJWT("-tier-claim", "plan", "-tier", "free plan=1/m"), "the name must be"},
		{"tier name too long", withJWT("-tier-claim", "plan", "-tier", strings.Repeat("a", 65)+"=1/m"), "the name must be"},
		{"tier bad limit", withJWT("-tier-claim", "plan", "-tier", "free=fast"), `-tier "free=fast"`},
		{"tier zero limit", withJWT("-tier-claim", "plan", "-tier", "free=0/m"), `-tier "free=0/m"`},
		{"tier burst on a window algorithm", withJWT("-algorithm", "fixed-window", "-tier-claim", "plan", "-tier", "free=1/m burst 5"), "-algorithm fixed-window"},
		{"tier given twice", withJWT("-tier-claim", "plan", "-tier", "free=1/m", "-tier", "free=2/m"), "tier free is given twice"},
		{"tier with limit", withJWT("-limit", "5/m", "-tier-claim", "plan", "-tier", "free=1/m"), "-limit and -tier both give the limit"},
		{"tier with burst", withJWT("-burst", "5", "-tier-claim", "plan", "-tier", "free=1/m"), "-burst does not apply to tiers"},
		{"tier claim empty", withJWT("-tier-claim", "", "-tier", "free=1/m"), "-tier needs -tier-claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.Contains(t, stderr.String(), "run ex -h for the flags")
		})
	}
}

func TestLoadHelpDocumentsFeatures(t *testing.T) {
	var stderr bytes.Buffer
	_, code := Load("ex", []string{"-h"}, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"-dry-run", "-metrics", "-tier-claim CLAIM", "-tier NAME=LIMIT", "-count-only-failures", "POST /login", "password=" + DemoPassword, "GET  /metrics"} {
		assert.Contains(t, stderr.String(), want)
	}
}

// build parses args, builds the setup and the policy on it.
func build(t *testing.T, args ...string) (*Setup, *httplimit.Policy) {
	t.Helper()
	c, err := Parse("ex", args, &bytes.Buffer{})
	require.NoError(t, err)
	s, err := c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	p, err := httplimit.New(s.Limiter, s.Options...)
	require.NoError(t, err)
	return s, p
}

// Under -dry-run nothing is denied, and the headers tell the truth.
func TestBuildDryRun(t *testing.T) {
	_, p := build(t, "-limit", "2/m", "-algorithm", "fixed-window", "-dry-run")
	for i, remaining := range []string{"1", "0", "0"} {
		status, h := handle(p, fakeRequest{path: "/"})
		assert.Zero(t, status, "request %d goes on", i+1)
		assert.Equal(t, remaining, h.Get("X-Ratelimit-Remaining"), "request %d", i+1)
		assert.True(t, strings.HasPrefix(h.Get("Ratelimit"), `"default";r=`+remaining+";"), "request %d: %s", i+1, h.Get("Ratelimit"))
	}
}

// The token's plan claim picks the tier; a token without it, or naming no
// tier, gets the first; RateLimit-Policy names the tier.
func TestBuildTiers(t *testing.T) {
	_, p := build(t, tierArgs...)
	tests := []struct {
		name   string
		claims gojwt.MapClaims
		policy string
		want   []int
	}{
		{"free", gojwt.MapClaims{"sub": "alice", "plan": "free"}, `"free";q=1;w=60`, []int{0, 429}},
		{"paid", gojwt.MapClaims{"sub": "bob", "plan": "paid"}, `"paid";q=3;w=60`, []int{0, 0, 0, 429}},
		{"no plan", gojwt.MapClaims{"sub": "carol"}, `"free";q=1;w=60`, []int{0, 429}},
		{"unknown plan", gojwt.MapClaims{"sub": "dave", "plan": "gold"}, `"free";q=1;w=60`, []int{0, 429}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, tt.claims).SignedString([]byte(secret32))
			require.NoError(t, err)
			req := headerRequest{name: "Authorization", value: "Bearer " + tok}
			for i, want := range tt.want {
				status, h := handle(p, req)
				assert.Equal(t, want, status, "request %d", i+1)
				assert.Equal(t, tt.policy, h.Get("Ratelimit-Policy"), "request %d", i+1)
			}
		})
	}
}

// handleFinished runs p on r as handle does, and when the request goes on,
// finishes it with the status its handler answered.
func handleFinished(p *httplimit.Policy, r fakeRequest, handlerStatus int) int {
	w := httptest.NewRecorder()
	pass, next := p.Handle(context.Background(), r, w)
	if !next {
		return w.Code
	}
	pass.Finish(handlerStatus)
	return handlerStatus
}

// Under -count-only-failures successes give their cost back: only failures
// reach the limit.
func TestBuildCountOnlyFailures(t *testing.T) {
	_, p := build(t, "-limit", "2/m", "-count-only-failures")
	for i := range 5 {
		assert.Equal(t, 200, handleFinished(p, fakeRequest{path: "/"}, 200), "success %d", i+1)
	}
	for i, want := range []int{401, 401, 429} {
		assert.Equal(t, want, handleFinished(p, fakeRequest{path: LoginPath}, 401), "failure %d", i+1)
	}
	assert.Equal(t, 429, handleFinished(p, fakeRequest{path: "/"}, 200), "the failures used up the limit")
}

// -metrics serves the decisions and the memory store's keys, and
// MetricsPath is never limited.
func TestBuildMetrics(t *testing.T) {
	s, p := build(t, "-limit", "2/m", "-metrics")
	require.NotNil(t, s.Metrics)
	for i, want := range []int{0, 0, 429} {
		status, _ := handle(p, fakeRequest{path: "/"})
		assert.Equal(t, want, status, "request %d", i+1)
	}
	status, h := handle(p, fakeRequest{path: MetricsPath})
	assert.Zero(t, status, "/metrics is never limited")
	assert.Empty(t, h.Get("Ratelimit"), "nor decided")

	rec := httptest.NewRecorder()
	s.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="allowed",policy="default"} 2`)
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="denied",policy="default"} 1`)
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="skipped",policy="default"} 1`)
	assert.Contains(t, body, "ratewarden_memory_store_keys 1")
}

// Without -metrics there is no handler, and MetricsPath is limited as any path.
func TestBuildWithoutMetrics(t *testing.T) {
	s, p := build(t, "-limit", "1/m")
	assert.Nil(t, s.Metrics)
	for i, want := range []int{0, 429} {
		status, _ := handle(p, fakeRequest{path: MetricsPath})
		assert.Equal(t, want, status, "request %d", i+1)
	}
}

// The start line says what is on.
func TestConfigString(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"plain", nil, []string{"gcra with 10/s on memory, key ip, failing open"}},
		{"dry run", []string{"-dry-run"}, []string{"dry run"}},
		{"metrics", []string{"-metrics"}, []string{"metrics on /metrics"}},
		{"count only failures", []string{"-count-only-failures"}, []string{"counting only failures"}},
		{"tiers", tierArgs, []string{"gcra with tiers free 1/m (default), paid 3/m by claim plan on memory, key jwt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("ex", tt.args, &bytes.Buffer{})
			require.NoError(t, err)
			for _, want := range tt.want {
				assert.Contains(t, c.String(), want)
			}
		})
	}
}

func TestLoginStatus(t *testing.T) {
	tests := []struct {
		password string
		want     int
	}{
		{DemoPassword, http.StatusOK},
		{"", http.StatusUnauthorized},
		{"wrong", http.StatusUnauthorized},
		{DemoPassword + " ", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.password, func(t *testing.T) {
			assert.Equal(t, tt.want, LoginStatus(tt.password))
		})
	}
}
