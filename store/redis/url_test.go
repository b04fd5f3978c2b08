package redisstore

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	tlsTo := func(host string) *tls.Config { return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12} }
	tests := []struct {
		name string
		url  string
		want redis.UniversalOptions
	}{
		{"single", "redis://127.0.0.1:6379", redis.UniversalOptions{Addrs: []string{"127.0.0.1:6379"}}},
		{"single with db", "redis://localhost:6380/3", redis.UniversalOptions{Addrs: []string{"localhost:6380"}, DB: 3}},
		{"single with slash", "redis://localhost:6380/", redis.UniversalOptions{Addrs: []string{"localhost:6380"}}},
		{"ipv6", "redis://[::1]:6379/0", redis.UniversalOptions{Addrs: []string{"[::1]:6379"}}},
		{"password", "redis://:s3cret@h:1", redis.UniversalOptions{Addrs: []string{"h:1"}, Password: "s3cret"}},
		{"user and password", "redis://app:s3cret@h:1/2", redis.UniversalOptions{Addrs: []string{"h:1"}, Username: "app", Password: "s3cret", DB: 2}},
		{"user alone", "redis://app@h:1", redis.UniversalOptions{Addrs: []string{"h:1"}, Username: "app"}},
		{"encoded password", "redis://app:a%40b%3Ac%2Fd%3F%23%25@h:1", redis.UniversalOptions{Addrs: []string{"h:1"}, Username: "app", Password: "a@b:c/d?#%"}},
		{"raw @ in password", "redis://app:a@b@h:1", redis.UniversalOptions{Addrs: []string{"h:1"}, Username: "app", Password: "a@b"}},
		{"tls", "rediss://app:pw@redis.example.com:6380/1", redis.UniversalOptions{
			Addrs: []string{"redis.example.com:6380"}, Username: "app", Password: "pw", DB: 1, TLSConfig: tlsTo("redis.example.com")}},
		{"options", "redis://h:1/0?dial_timeout=3&read_timeout=500ms&write_timeout=1s&pool_size=20&min_idle_conns=2&max_retries=-1&client_name=rw&protocol=2&db=4", redis.UniversalOptions{
			Addrs: []string{"h:1"}, DialTimeout: 3 * time.Second, ReadTimeout: 500 * time.Millisecond, WriteTimeout: time.Second,
			PoolSize: 20, MinIdleConns: 2, MaxRetries: -1, ClientName: "rw", Protocol: 2, DB: 4}},
		{"cluster of one", "redis-cluster://10.0.0.1:7000", redis.UniversalOptions{Addrs: []string{"10.0.0.1:7000"}, IsClusterMode: true}},
		{"cluster", "redis-cluster://a:7000,b:7001,c:7002", redis.UniversalOptions{Addrs: []string{"a:7000", "b:7001", "c:7002"}, IsClusterMode: true}},
		{"cluster with everything", "rediss-cluster://app:pw@a:7000,b:7001/?max_redirects=2&read_only=true&pool_size=5", redis.UniversalOptions{
			Addrs: []string{"a:7000", "b:7001"}, IsClusterMode: true, Username: "app", Password: "pw", TLSConfig: tlsTo("a"),
			MaxRedirects: 2, ReadOnly: true, PoolSize: 5}},
		{"sentinel", "redis-sentinel://s1:26379,s2:26379/mymaster", redis.UniversalOptions{Addrs: []string{"s1:26379", "s2:26379"}, MasterName: "mymaster"}},
		{"sentinel with everything", "rediss-sentinel://app:pw@s1:26379/mymaster/2?sentinel_auth=true&dial_timeout=2s", redis.UniversalOptions{
			Addrs: []string{"s1:26379"}, MasterName: "mymaster", DB: 2, Username: "app", Password: "pw",
			SentinelUsername: "app", SentinelPassword: "pw", TLSConfig: tlsTo("s1"), DialTimeout: 2 * time.Second}},
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
		{"unknown tls scheme", "rediss-other://127.0.0.1:6379", `unknown scheme "rediss-other"`},
		{"unix socket", "unix:///tmp/redis.sock", `unknown scheme "unix"`},
		{"upper-case scheme", "REDIS://127.0.0.1:6379", "unknown scheme"},
		{"no port", "redis://127.0.0.1", "is not host:port"},
		{"no host", "redis://:6379", "is not host:port"},
		{"nothing after scheme", "redis://", "is not host:port"},
		{"port zero", "redis://127.0.0.1:0", "port must be a number from 1 to 65535"},
		{"port too large", "redis://127.0.0.1:65536", "port must be"},
		{"port not a number", "redis://127.0.0.1:http", "port must be"},
		{"two hosts for a single server", "redis://a:1,b:2", "one host:port for a single server"},
		{"db not a number", "redis://127.0.0.1:6379/x", "database must be a number"},
		{"db negative", "redis://127.0.0.1:6379/-1", "database must be a number"},
		{"db query negative", "redis://127.0.0.1:6379?db=-1", "database must be a number"},
		{"db path", "redis://127.0.0.1:6379/0/1", "database must be a number"},
		{"unknown option", "redis://127.0.0.1:6379?bogus=1", "unexpected option: bogus"},
		{"bad option value", "redis://127.0.0.1:6379?pool_size=many", "invalid pool_size number"},
		{"bad duration", "redis://127.0.0.1:6379?dial_timeout=soon", "invalid dial_timeout duration"},
		{"password in query", "redis://127.0.0.1:6379?password=hunter2", "the option password is refused"},
		{"addr in query", "redis-cluster://127.0.0.1:6379?addr=b:2", "the option addr is refused"},
		{"skip verify", "rediss://127.0.0.1:6379?skip_verify=true", "the option skip_verify is refused"},
		{"sentinel_auth off sentinel", "redis://127.0.0.1:6379?sentinel_auth=true", "sentinel_auth is an option of redis-sentinel"},
		{"sentinel_auth not a bool", "redis-sentinel://h:1/m?sentinel_auth=yes", "sentinel_auth: want true or false"},
		{"empty query", "redis://127.0.0.1:6379?", "an empty query"},
		{"bad query", "redis://127.0.0.1:6379?a=%zz", "the query"},
		{"fragment", "redis://127.0.0.1:6379#x", "a fragment"},
		{"bad escape", "redis://127.0.0.1:6379/%zz", "the path is not"},
		{"control character", "redis://127.0.0.1:6379/\x00", "database must be a number"},
		{"control character in host", "redis://a\x00b:1", "is not host:port"},
		{"slash in password", "redis://u:a/b@h:1", "percent-encode it"},
		{"bad escape in password", "redis://u:a%zz@h:1", "bad %-escape"},
		{"cluster empty", "redis-cluster://", "is not host:port"},
		{"cluster bad address", "redis-cluster://127.0.0.1:7000,nope", `"nope" is not host:port`},
		{"cluster empty address", "redis-cluster://127.0.0.1:7000,,127.0.0.1:7001", `"" is not host:port`},
		{"cluster port zero", "redis-cluster://127.0.0.1:0", "port must be"},
		{"cluster with db", "redis-cluster://127.0.0.1:7000/1", "a cluster has no database"},
		{"sentinel without master", "redis-sentinel://127.0.0.1:26379", "no master's name"},
		{"sentinel bad db", "redis-sentinel://127.0.0.1:26379/m/x", "database must be a number"},
		{"sentinel replica reads", "redis-sentinel://127.0.0.1:26379/m?replica_only=true", "replica reads are not supported"},
		{"too long", "redis://" + strings.Repeat("a", 70000) + ":1", "longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseURL(tt.url)
			assert.Nil(t, got)
			require.ErrorIs(t, err, ErrURL)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), URLForms, "the error says what is wanted")
			assert.Less(t, len(err.Error()), 500, "a long URL is shortened in the message")
		})
	}
}

// No error of ParseURL holds the password, whatever is wrong with the URL:
// a 10 KiB password, a password of every special character (encoded, and
// raw), a password where a query option was expected.
func TestParseURLNeverQuotesThePassword(t *testing.T) {
	special := "p!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \té"
	long := strings.Repeat("Kq7#", 2560) // 10 KiB
	for name, pw := range map[string]string{"special": special, "10 KiB": long, "plain": "hunter2hunter2"} {
		enc := escapeAll(pw)
		for _, u := range []string{
			"redis://app:" + enc + "@127.0.0.1:6379/x",           // a bad database
			"redis://app:" + enc + "@127.0.0.1:0",                // a bad port
			"rediss-cluster://app:" + enc + "@a:1,b:2/3",         // a cluster with a db
			"redis://app:" + enc + "@127.0.0.1:6379?bogus=1",     // an unknown option
			"redis://app:" + pw + "@127.0.0.1:6379",              // unencoded
			"redis://127.0.0.1:6379?password=" + enc,             // in the query
			"redis-sentinel://:" + enc + "@127.0.0.1:26379",      // no master
			"memcached://app:" + enc + "@127.0.0.1:6379?token=1", // a wrong scheme
		} {
			_, err := ParseURL(u)
			if err == nil {
				continue // the unencoded special password parses: nothing to print
			}
			for _, part := range []string{pw, enc, pw[:8], enc[:8]} {
				assert.NotContains(t, err.Error(), part, "%s: %s", name, err)
			}
		}
		opts, err := ParseURL("redis://app:" + enc + "@127.0.0.1:6379/0")
		require.NoError(t, err)
		assert.Equal(t, pw, opts.Password, name)
	}
}

// escapeAll percent-encodes every byte of s.
func escapeAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])+string("0123456789abcdef"[s[i]&15])))
	}
	return b.String()
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://app:s3cret@h:1/0":                 "redis://app:xxxxx@h:1/0",
		"redis://:s3cret@h:1":                      "redis://:xxxxx@h:1",
		"redis://app@h:1":                          "redis://app@h:1",
		"redis://h:1/0?pool_size=2":                "redis://h:1/0?pool_size=2",
		"redis://a:b/c@d@h:1?x=1":                  "redis://a:xxxxx@h:1?x=1",
		"redis://h:1?password=s3cret&pool_size=2":  "redis://h:1?password=xxxxx&pool_size=2",
		"redis://h:1?Sentinel_Password=s3cret":     "redis://h:1?Sentinel_Password=xxxxx",
		"rediss-sentinel://u:p@s:1/m?api_token=zz": "rediss-sentinel://u:xxxxx@s:1/m?api_token=xxxxx",
		"s3cret": "(not a URL)",
	} {
		assert.Equal(t, want, RedactURL(in), in)
	}
}

func TestParseURLPasswordAndCA(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	pwFile := file("pw", "from-file\r\n")
	opts, err := ParseURL("redis://app@h:1", WithPassword("from-env"), WithPasswordFile(pwFile))
	require.NoError(t, err)
	assert.Equal(t, "from-file", opts.Password, "the file wins over WithPassword")
	opts, err = ParseURL("redis://h:1", WithPassword("from-env"))
	require.NoError(t, err)
	assert.Equal(t, "from-env", opts.Password)
	opts, err = ParseURL("redis://:in-url@h:1", WithPassword("from-env"), WithPasswordFile(pwFile))
	require.NoError(t, err)
	assert.Equal(t, "in-url", opts.Password, "a password in the URL wins")
	opts, err = ParseURL("redis-sentinel://u@h:1/m?sentinel_auth=true", WithPasswordFile(pwFile))
	require.NoError(t, err)
	assert.Equal(t, "from-file", opts.SentinelPassword)
	opts, err = ParseURL("redis-sentinel://u@h:1/m", WithPasswordFile(pwFile))
	require.NoError(t, err)
	assert.Empty(t, opts.SentinelPassword, "the Sentinels get no password without sentinel_auth")

	for name, tt := range map[string]struct {
		opt  URLOption
		url  string
		want string
	}{
		"missing password file": {WithPasswordFile(filepath.Join(dir, "nope")), "redis://h:1", "no such file"},
		"empty password file":   {WithPasswordFile(file("empty", "\n")), "redis://h:1", "is empty"},
		"huge password file":    {WithPasswordFile(file("huge", strings.Repeat("x", 2<<20))), "redis://h:1", "larger than"},
		"CA without TLS":        {WithCAFile(file("ca", "x")), "redis://h:1", "does not use TLS"},
		"CA not PEM":            {WithCAFile(file("ca2", "not a certificate")), "rediss://h:1", "holds no PEM certificate"},
		"missing CA":            {WithCAFile(filepath.Join(dir, "nope.crt")), "rediss://h:1", "no such file"},
	} {
		_, err := ParseURL(tt.url, tt.opt)
		require.ErrorIs(t, err, ErrURL, name)
		assert.Contains(t, err.Error(), tt.want, name)
		assert.NotContains(t, err.Error(), "xxxxxxxx", name)
	}
}

// Every option go-redis's parsers set reaches the UniversalOptions: a field
// that cannot is refused, never dropped.
func TestUniversalCarriesEveryField(t *testing.T) {
	parsed := &redis.FailoverOptions{ReplicaOnly: true}
	_, err := universal(parsed, nil, false)
	require.ErrorContains(t, err, "ReplicaOnly")
	o := &redis.Options{PoolSize: 3, ConnMaxIdleTime: time.Minute, TLSConfig: &tls.Config{}}
	uo, err := universal(o, []string{"h:1"}, false)
	require.NoError(t, err)
	assert.Equal(t, 3, uo.PoolSize)
	assert.Equal(t, time.Minute, uo.ConnMaxIdleTime)
	assert.Same(t, o.TLSConfig, uo.TLSConfig)
	assert.True(t, reflect.DeepEqual([]string{"h:1"}, uo.Addrs))
}

// FuzzParseURL: no input panics, an error never holds the URL's password,
// and whatever is accepted names at least one address, each host:port.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/2", "redis-cluster://a:1,b:2", "redis://u:p@h:1", "redis://[::1]:1", "x",
		"rediss-sentinel://u:p@s:1/m/2?sentinel_auth=1", "redis://h:1?pool_size=2&dial_timeout=1s"} {
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
		if len(opts.Password) >= 6 {
			_, err := ParseURL(s + "/x/y")
			if err != nil {
				require.NotContains(t, err.Error(), opts.Password)
			}
		}
	})
}
