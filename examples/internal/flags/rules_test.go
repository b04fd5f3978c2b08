package flags

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleRules is examples/rules.yaml, from this package's folder.
var exampleRules = filepath.Join("..", "..", "rules.yaml")

func TestParseRules(t *testing.T) {
	fallback := writeRules(t, "fallback.yaml", rulesDoc(1, "10/s"))
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c *Config)
	}{
		{"no rules", nil, func(t *testing.T, c *Config) {
			assert.Equal(t, NoRules, c.RulesSource)
			assert.Empty(t, c.Rules)
			assert.Equal(t, "ip", c.Key)
		}},
		{"a file", []string{"-rules", exampleRules}, func(t *testing.T, c *Config) {
			assert.Equal(t, RulesFile, c.RulesSource)
			assert.Equal(t, exampleRules, c.Rules)
			assert.Empty(t, c.Key, "the document gives the keys")
			assert.Zero(t, c.RulesPoll)
		}},
		{"a file, every other flag", []string{"-rules", exampleRules, "-store", "redis://127.0.0.1:6379/2", "-fail", "closed", "-dry-run", "-metrics",
			"-count-only-failures", "-trusted-proxies", "10.0.0.0/8", "-jwt-secret", secret32, "-addr", "127.0.0.1:0"}, func(t *testing.T, c *Config) {
			assert.Equal(t, RulesFile, c.RulesSource)
			assert.Equal(t, Redis, c.Store)
			assert.True(t, c.FailClosed)
			assert.True(t, c.DryRun)
			assert.True(t, c.Metrics)
			assert.True(t, c.CountOnlyFailures)
			assert.Equal(t, []string{"10.0.0.0/8"}, c.TrustedProxies)
			assert.Equal(t, secret32, c.JWTSecret)
		}},
		{"redis", []string{"-rules", "redis://127.0.0.1:6380/4"}, func(t *testing.T, c *Config) {
			assert.Equal(t, RulesRedis, c.RulesSource)
			assert.Equal(t, []string{"127.0.0.1:6380"}, c.RulesAddrs)
			assert.Equal(t, 4, c.RulesDB)
			assert.Equal(t, Memory, c.Store, "the counters stay where -store says")
		}},
		{"redis cluster, poll and fallback", []string{"-rules", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001", "-rules-poll", "250ms", "-rules-fallback", fallback}, func(t *testing.T, c *Config) {
			assert.Equal(t, RulesRedisCluster, c.RulesSource)
			assert.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001"}, c.RulesAddrs)
			assert.Equal(t, 250*time.Millisecond, c.RulesPoll)
			assert.Equal(t, fallback, c.RulesFallback)
		}},
		{"poll at its bounds", []string{"-rules", "redis://127.0.0.1:6379", "-rules-poll", "10ms"}, func(t *testing.T, c *Config) {
			assert.Equal(t, 10*time.Millisecond, c.RulesPoll)
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

// Every bad value or combination of the rules flags gets exit status 2 and a
// one-line message naming the flag.
func TestLoadBadRulesFlags(t *testing.T) {
	dir := t.TempDir()
	fallback := writeRules(t, "fallback.yaml", rulesDoc(1, "10/s"))
	const redisRules = "redis://127.0.0.1:6379"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"empty", []string{"-rules", ""}, "-rules: want a rules file or redis[s]://"},
		{"no such file", []string{"-rules", filepath.Join(dir, "none.yaml")}, "none.yaml: no such file"},
		{"a folder", []string{"-rules", dir}, "not a regular file"},
		{"with -limit", []string{"-rules", exampleRules, "-limit", "5/s"}, "-rules and -limit"},
		{"with -burst", []string{"-rules", exampleRules, "-burst", "5"}, "-rules and -burst"},
		{"with -algorithm", []string{"-rules", exampleRules, "-algorithm", "gcra"}, "-rules and -algorithm"},
		{"with -key", []string{"-rules", exampleRules, "-key", "ip"}, "-rules and -key"},
		{"with tiers", []string{"-rules", exampleRules, "-tier-claim", "plan", "-tier", "free=1/m"}, "-rules and -tier-claim"},
		{"with -tier", []string{"-rules", exampleRules, "-tier", "free=1/m"}, "-rules and -tier"},
		{"bad redis URL", []string{"-rules", "redis://127.0.0.1"}, "-rules: "},
		{"redis URL with a password in its query", []string{"-rules", "redis://127.0.0.1:6379?password=p"}, "-rules: "},
		{"redis cluster without a node", []string{"-rules", "redis-cluster://"}, "-rules: "},
		{"poll without rules", []string{"-rules-poll", "1s"}, "-rules-poll is only used with -rules redis://"},
		{"fallback without rules", []string{"-rules-fallback", fallback}, "-rules-fallback is only used with -rules redis://"},
		{"poll with a file", []string{"-rules", exampleRules, "-rules-poll", "1s"}, "-rules-poll is only used with a Redis -rules"},
		{"fallback with a file", []string{"-rules", exampleRules, "-rules-fallback", fallback}, "-rules-fallback is only used with a Redis -rules"},
		{"poll not a duration", []string{"-rules", redisRules, "-rules-poll", "often"}, "-rules-poll"},
		{"poll too short", []string{"-rules", redisRules, "-rules-poll", "1ms"}, "-rules-poll 1ms: want from 10ms to 24h0m0s"},
		{"poll too long", []string{"-rules", redisRules, "-rules-poll", "25h"}, "-rules-poll 25h0m0s: want from"},
		{"poll negative", []string{"-rules", redisRules, "-rules-poll", "-1s"}, "-rules-poll -1s"},
		{"fallback missing", []string{"-rules", redisRules, "-rules-fallback", filepath.Join(dir, "none.yaml")}, "-rules-fallback " + filepath.Join(dir, "none.yaml") + ": no such file"},
		{"fallback empty", []string{"-rules", redisRules, "-rules-fallback", ""}, "-rules-fallback: want a rules file"},
		{"jwt secret too short", []string{"-rules", exampleRules, "-jwt-secret", "short"}, "-jwt-secret: "},
		{"trusted proxies bad CIDR", []string{"-rules", exampleRules, "-trusted-proxies", "10.0.0.0/99"}, "-trusted-proxies: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			// The message is one line (a value the flag package cannot read
			// has its usage printed before it), then the hint.
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			require.GreaterOrEqual(t, len(lines), 2, stderr.String())
			assert.Equal(t, "run ex -h for the flags", lines[len(lines)-1])
			assert.True(t, strings.HasPrefix(lines[len(lines)-2], "ex: "), lines[len(lines)-2])
			assert.Contains(t, lines[len(lines)-2], tt.want)
		})
	}
}

func TestLoadHelpDocumentsRules(t *testing.T) {
	var stderr bytes.Buffer
	_, code := Load("ex", []string{"-h"}, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"-rules FILE", "-rules-poll", "-rules-fallback FILE", "redis-cluster://", "GET  /api/items/{id}",
		"DELETE /api/items/{id}", "X-Password: right", "anything else           404", "do not go with -rules"} {
		assert.Contains(t, stderr.String(), want)
	}
}

// rulesDoc is a rules document of one policy, "api", limiting every request
// per IP, at version.
func rulesDoc(version int, limit string) string {
	return "schema: 1\nversion: " + strconv.Itoa(version) + "\npolicies:\n  - {name: api, limits: [" + limit + "]}\n"
}

// writeRules writes a rules file in a temporary folder and returns its path.
func writeRules(t *testing.T, name, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	return path
}
