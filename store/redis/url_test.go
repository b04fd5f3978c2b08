package redisstore

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want redis.UniversalOptions
	}{
		{"single", "redis://127.0.0.1:6379", redis.UniversalOptions{Addrs: []string{"127.0.0.1:6379"}}},
		{"single with db", "redis://localhost:6380/3", redis.UniversalOptions{Addrs: []string{"localhost:6380"}, DB: 3}},
		{"single with slash", "redis://localhost:6380/", redis.UniversalOptions{Addrs: []string{"localhost:6380"}}},
		{"ipv6", "redis://[::1]:6379/0", redis.UniversalOptions{Addrs: []string{"[::1]:6379"}}},
		{"cluster of one", "redis-cluster://10.0.0.1:7000", redis.UniversalOptions{Addrs: []string{"10.0.0.1:7000"}, IsClusterMode: true}},
		{"cluster", "redis-cluster://a:7000,b:7001,c:7002", redis.UniversalOptions{Addrs: []string{"a:7000", "b:7001", "c:7002"}, IsClusterMode: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseURL(tt.url)
			require.NoError(t, err)
			tt.want.ContextTimeoutEnabled = true
			assert.Equal(t, &tt.want, got)
		})
	}
}

func TestParseURLBad(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"empty", "", "no scheme"},
		{"no scheme", "localhost:6379", "no scheme"},
		{"unknown scheme", "memcached://127.0.0.1:11211", `unknown scheme "memcached"`},
		{"tls scheme", "rediss://127.0.0.1:6379", `unknown scheme "rediss"`},
		{"upper-case scheme", "REDIS://127.0.0.1:6379", "unknown scheme"},
		{"no port", "redis://127.0.0.1", "is not host:port"},
		{"no host", "redis://:6379", "is not host:port"},
		{"nothing after scheme", "redis://", "is not host:port"},
		{"port zero", "redis://127.0.0.1:0", "port must be a number from 1 to 65535"},
		{"port too large", "redis://127.0.0.1:65536", "port must be"},
		{"port not a number", "redis://127.0.0.1:http", `not a URL: invalid port ":http"`},
		{"db not a number", "redis://127.0.0.1:6379/x", "database must be a number"},
		{"db negative", "redis://127.0.0.1:6379/-1", "database must be a number"},
		{"db path", "redis://127.0.0.1:6379/0/1", "database must be a number"},
		{"password", "redis://user:pw@127.0.0.1:6379", "not a plain redis URL"},
		{"query", "redis://127.0.0.1:6379?db=2", "not a plain redis URL"},
		{"empty query", "redis://127.0.0.1:6379?", "not a plain redis URL"},
		{"fragment", "redis://127.0.0.1:6379#x", "not a plain redis URL"},
		{"bad escape", "redis://127.0.0.1:6379/%zz", "not a URL: invalid URL escape"},
		{"control character", "redis://127.0.0.1:6379/\x00", "not a URL: net/url: invalid control character"},
		{"cluster empty", "redis-cluster://", "is not host:port"},
		{"cluster bad address", "redis-cluster://127.0.0.1:7000,nope", `"nope" is not host:port`},
		{"cluster empty address", "redis-cluster://127.0.0.1:7000,,127.0.0.1:7001", `"" is not host:port`},
		{"cluster port zero", "redis-cluster://127.0.0.1:0", "port must be"},
		{"cluster with db", "redis-cluster://127.0.0.1:7000/1", "port must be"},
		{"too long", "redis://" + strings.Repeat("a", 5000) + ":1", "longer than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseURL(tt.url)
			assert.Nil(t, got)
			require.ErrorIs(t, err, ErrURL)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), URLForms, "the error says what is wanted")
			assert.Less(t, len(err.Error()), 400, "a long URL is shortened in the message")
		})
	}
}

// FuzzParseURL: no input panics, and whatever is accepted names at least one
// address, each of which is host:port.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/2", "redis-cluster://a:1,b:2", "redis://u:p@h:1", "redis://[::1]:1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := ParseURL(s)
		if err != nil {
			require.ErrorIs(t, err, ErrURL)
			return
		}
		require.NotEmpty(t, opts.Addrs)
		for _, a := range opts.Addrs {
			require.NoError(t, checkHostPort(a))
		}
		require.True(t, opts.ContextTimeoutEnabled)
	})
}
