package flags

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The passwords of the managed-Redis tests: every special character, and
// 10 KiB.
var (
	specialPassword = "p!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ é"
	longPassword    = strings.Repeat("Kq7#", 2560)
)

// managedServers start a Redis that wants an ACL user and its password, and
// one that speaks TLS with a private CA and wants a password.
func managedServers(t *testing.T) (acl, tlsSrv *redistest.Server) {
	acl = redistest.StartSecure(t, redistest.SecureOptions{Password: longPassword, User: "app", UserPassword: specialPassword})
	tlsSrv = redistest.StartSecure(t, redistest.SecureOptions{TLS: true, Password: specialPassword})
	return acl, tlsSrv
}

// pushTo pushes a rules document of version 1 to srv, the way the operator's
// tool does.
func pushTo(t *testing.T, srv *redistest.Server, user string) {
	t.Helper()
	opts, err := redisstore.ParseURL(srv.URLWith(user, specialPassword), redisstore.WithCAFile(srv.CAFile()))
	require.NoError(t, err)
	client := redis.NewUniversalClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	b, err := redisstore.NewRulesBackend(client)
	require.NoError(t, err)
	_, err = rules.PushRules(context.Background(), b, []byte(rulesDoc(1, "5/m")))
	require.NoError(t, err)
}

// A server with -store and -rules on a Redis that wants an ACL user, and on
// one that speaks TLS with a private CA, takes its rules and keeps its
// counters there, the password from -redis-password-file or
// $RATEWARDEN_REDIS_PASSWORD.
func TestManagedRedis(t *testing.T) {
	acl, tlsSrv := managedServers(t)
	pwFile := filepath.Join(t.TempDir(), "password")
	require.NoError(t, os.WriteFile(pwFile, []byte(specialPassword+"\n"), 0o600))
	tests := []struct {
		name   string
		srv    *redistest.Server
		user   string
		env    bool
		extras []string
	}{
		{"ACL user, password file", acl, "app", false, []string{"-redis-password-file", pwFile}},
		{"ACL user, password in the environment", acl, "app", true, nil},
		{"TLS, password file and CA", tlsSrv, "", false, []string{"-redis-password-file", pwFile, "-redis-ca", tlsSrv.CAFile()}},
		{"TLS, password in the environment", tlsSrv, "", true, []string{"-redis-ca", tlsSrv.CAFile()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env {
				t.Setenv(envRedisPassword, specialPassword)
			}
			url := tt.srv.URLWith(tt.user, "")
			if tt.user == "" {
				url = tt.srv.URL()
			}
			_, err := tt.srv.Do("FLUSHDB")
			require.NoError(t, err)
			pushTo(t, tt.srv, tt.user)
			s := startRules(t, append([]string{"-rules", url, "-store", url}, tt.extras...)...)
			assert.Equal(t, `"api";q=5;w=60`, s.policyOf(t, "192.0.2.1"))
			keys, err := tt.srv.Do("DBSIZE")
			require.NoError(t, err)
			assert.NotEqual(t, "1", keys, "a counter is kept beside the rules")
			assert.Contains(t, s.setup.String(), "rules in redis 127.0.0.1:")
			assert.NotContains(t, s.log.String(), "redis did not answer")
		})
	}
}

// A wrong password and an untrusted certificate are said plainly, with no
// password in any message: on the error log for -store (the server starts,
// failing open), and as the reason the server does not start for -rules.
func TestManagedRedisRefused(t *testing.T) {
	acl, tlsSrv := managedServers(t)
	pushTo(t, acl, "app")
	tests := []struct {
		name, url string
		want      string
	}{
		{"wrong password", acl.URLWith("app", "x"+specialPassword), "the user or password is wrong, or the user is disabled (WRONGPASS)"},
		{"no password", acl.URL(), "Redis requires a password and none was given (NOAUTH)"},
		{"TLS without the CA", tlsSrv.URLWith("", specialPassword), "signed by an authority this client does not trust"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			c, err := Parse("ex", []string{"-store", tt.url}, &bytes.Buffer{})
			require.NoError(t, err)
			c.ErrorLog = &log
			s, err := c.Build()
			require.NoError(t, err)
			defer s.Close()
			assert.Contains(t, log.String(), "rate limiter: redis did not answer at start")
			assert.Contains(t, log.String(), tt.want)

			var stderr bytes.Buffer
			setup, code := Load("ex", []string{"-rules", tt.url}, &stderr)
			assert.Nil(t, setup)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr.String(), tt.want)
			for _, out := range []string{log.String(), stderr.String()} {
				assert.NotContains(t, out, specialPassword[:10])
			}
		})
	}
}

// The Redis flags are checked like the others (exit 2), a URL's password is
// redacted in every message, and -h documents the URL forms, the password
// file and the environment without printing a password.
func TestManagedRedisFlags(t *testing.T) {
	t.Setenv(envRedisPassword, longPassword)
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"CA without TLS", []string{"-store", "redis://127.0.0.1:6379", "-redis-ca", "ca.pem"}, "-redis-ca is only used with a TLS -store or -rules"},
		{"CA with memory", []string{"-redis-ca", "ca.pem"}, "-redis-ca is only used with a TLS"},
		{"password file with memory", []string{"-redis-password-file", "pw"}, "-redis-password-file is only used with a Redis -store or -rules"},
		{"missing password file", []string{"-store", "redis://127.0.0.1:6379", "-redis-password-file", filepath.Join(dir, "nope")}, "-store: redisstore: bad Redis URL \"redis://127.0.0.1:6379\": the password file: open "},
		{"missing CA", []string{"-store", "rediss://127.0.0.1:6379", "-redis-ca", filepath.Join(dir, "nope.pem")}, "the CA file: open "},
		{"bad database, long password", []string{"-store", "redis://app:" + longPassword + "@127.0.0.1:6379/x"}, `-store: redisstore: bad Redis URL "redis://app:xxxxx@127.0.0.1:6379/x": `},
		{"special password, bad port", []string{"-rules", "rediss://app:" + strings.ReplaceAll(specialPassword, "%", "%25") + "@127.0.0.1:0"}, "-rules: redisstore: bad Redis URL"},
		{"unknown store, with a password", []string{"-store", "memcached://app:" + specialPassword + "@h:1"}, `-store "memcached://app:xxxxx@h:1": unknown store`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.NotContains(t, stderr.String(), longPassword[:10])
			assert.NotContains(t, stderr.String(), specialPassword[:10])
		})
	}
	var stderr bytes.Buffer
	_, code := Load("ex", []string{"-h"}, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"-redis-password-file FILE", "-redis-ca FILE", "$RATEWARDEN_REDIS_PASSWORD", "rediss://", "redis-cluster://", "redis-sentinel://", "dial_timeout"} {
		assert.Contains(t, stderr.String(), want)
	}
	assert.NotContains(t, stderr.String(), longPassword[:10])
}
