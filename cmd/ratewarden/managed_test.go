package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// Passwords of the managed-Redis tests: every special character, and 10 KiB.
var (
	specialPassword = "p!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ é"
	longPassword    = strings.Repeat("Kq7#", 2560)
)

// assertNoSecret fails t when r's output holds any of the passwords, whole or
// a telling part of them.
func assertNoSecret(t *testing.T, r result, passwords ...string) {
	t.Helper()
	for _, pw := range passwords {
		for _, part := range []string{pw, pw[:10], strings.ReplaceAll(pw[:10], "%", "%25")} {
			assert.NotContains(t, r.stdout+r.stderr, part)
		}
	}
}

// The tool pushes and shows rules on a Redis that wants an ACL user and a
// password, and on one that speaks TLS with a private CA, the password and
// the CA taken from the environment, a password file or the URL.
func TestManagedRedis(t *testing.T) {
	t.Parallel()
	acl := redistest.StartSecure(t, redistest.SecureOptions{Password: longPassword, User: "app", UserPassword: specialPassword})
	tlsSrv := redistest.StartSecure(t, redistest.SecureOptions{TLS: true, User: "app", UserPassword: specialPassword})
	pwFile := filepath.Join(t.TempDir(), "password")
	require.NoError(t, os.WriteFile(pwFile, []byte(specialPassword+"\n"), 0o600))
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"ACL user, password in the environment", []string{"RATEWARDEN_REDIS=" + acl.URLWith("app", ""), "RATEWARDEN_REDIS_PASSWORD=" + specialPassword}, nil},
		{"ACL user, password file", []string{"RATEWARDEN_REDIS=" + acl.URLWith("app", "")}, []string{"--redis-password-file", pwFile}},
		{"ACL user, password file from the environment", []string{"RATEWARDEN_REDIS_PASSWORD_FILE=" + pwFile}, []string{"--redis", acl.URLWith("app", "")}},
		{"requirepass, 10 KiB password in the URL", []string{"RATEWARDEN_REDIS=" + acl.URLWith("default", longPassword)}, nil},
		{"TLS, CA flag", []string{"RATEWARDEN_REDIS=" + tlsSrv.URLWith("app", "")}, []string{"--redis-ca", tlsSrv.CAFile(), "--redis-password-file", pwFile}},
		{"TLS, CA from the environment", []string{"RATEWARDEN_REDIS_CA=" + tlsSrv.CAFile(), "RATEWARDEN_REDIS_PASSWORD=" + specialPassword}, []string{"--redis", tlsSrv.URLWith("app", "")}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "managed" + string(rune('a'+i)) + ":"
			args := append([]string{"--prefix", prefix}, tt.args...)
			r := ratewarden(t, tt.env, append([]string{"rules", "push", "testdata/rules.yaml"}, args...)...)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "pushed testdata/rules.yaml: version 7")
			r = ratewarden(t, tt.env, append([]string{"rules", "show"}, args...)...)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, "version: 7")
			r = ratewarden(t, tt.env, append([]string{"key", "show", "login", "203.0.113.9"}, args...)...)
			require.Equal(t, exitOK, r.code, r.stderr)
			assertNoSecret(t, r, specialPassword, longPassword)
		})
	}
}

// A wrong or missing password, and a certificate the tool does not trust,
// are exit 1 with a message that says what to fix and holds no password.
func TestManagedRedisRefused(t *testing.T) {
	t.Parallel()
	acl := redistest.StartSecure(t, redistest.SecureOptions{Password: longPassword, User: "app", UserPassword: specialPassword})
	tlsSrv := redistest.StartSecure(t, redistest.SecureOptions{TLS: true, Password: specialPassword})
	other, err := redistest.NewTestCA(t.TempDir())
	require.NoError(t, err)
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"wrong password", []string{"RATEWARDEN_REDIS=" + acl.URLWith("app", "x"+specialPassword)},
			"redis://app:xxxxx@" + acl.Addr() + ": redisstore: Redis refused the credentials: the user or password is wrong, or the user is disabled (WRONGPASS)"},
		{"wrong password from the environment", []string{"RATEWARDEN_REDIS=" + acl.URL(), "RATEWARDEN_REDIS_PASSWORD=" + longPassword[1:]}, "(WRONGPASS)"},
		{"no password", []string{"RATEWARDEN_REDIS=" + acl.URL()}, "Redis requires a password and none was given (NOAUTH)"},
		{"TLS, system roots", []string{"RATEWARDEN_REDIS=" + tlsSrv.URLWith("", specialPassword)},
			"rediss://:xxxxx@" + tlsSrv.Addr() + ": redisstore: TLS with Redis failed: the server's certificate is signed by an authority this client does not trust"},
		{"TLS, another CA", []string{"RATEWARDEN_REDIS=" + tlsSrv.URLWith("", specialPassword), "RATEWARDEN_REDIS_CA=" + other.CertFile}, "does not trust"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ratewarden(t, tt.env, "rules", "show", "--timeout", "3s")
			assert.Equal(t, exitProblems, r.code)
			assert.Contains(t, r.stderr, tt.want)
			assertNoSecret(t, r, specialPassword, longPassword)
		})
	}
}

// -h never prints a password, even when $RATEWARDEN_REDIS holds one, and
// documents the URL forms, the environment and the password file; a bad URL
// is exit 2 with its password redacted.
func TestManagedRedisHelpAndBadURL(t *testing.T) {
	t.Parallel()
	withPassword := (&url.URL{Scheme: "rediss", User: url.UserPassword("app", specialPassword), Host: "h:1", Path: "/0"}).String()
	env := []string{"RATEWARDEN_REDIS=" + withPassword, "RATEWARDEN_REDIS_PASSWORD=" + longPassword}
	for _, args := range [][]string{{"-h"}, {"rules", "-h"}, {"key", "-h"}, {"rules", "push", "-h"}, {"key", "reset", "-h"}} {
		r := ratewarden(t, env, args...)
		assert.Equal(t, exitOK, r.code)
		assertNoSecret(t, r, specialPassword, longPassword)
		if len(args) <= 2 { // the tool's usage: -h, rules -h, key -h
			for _, s := range []string{"rediss://", "redis-cluster://", "rediss-sentinel://", "RATEWARDEN_REDIS_PASSWORD", "--redis-password-file", "--redis-ca", "dial_timeout"} {
				assert.Contains(t, r.stdout, s, args)
			}
		}
	}
	for _, u := range []string{
		"redis://app:" + specialPassword + "@127.0.0.1:6379/x",
		"redis://app:" + longPassword + "@127.0.0.1:0",
		"rediss://127.0.0.1:6379?password=" + longPassword,
	} {
		r := ratewarden(t, nil, "rules", "show", "--redis", u)
		assert.Equal(t, exitUsage, r.code)
		assert.Contains(t, r.stderr, "bad Redis URL")
		assertNoSecret(t, r, specialPassword, longPassword)
	}
	r := ratewarden(t, nil, "rules", "show", "--redis", "redis://h:1", "--redis-password-file", "/nonexistent/pw")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "the password file: open /nonexistent/pw: no such file or directory")
}
