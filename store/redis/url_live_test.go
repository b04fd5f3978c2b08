package redisstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The passwords of the live tests: 10 KiB, and every special character.
var (
	longPassword    = strings.Repeat("Kq7#", 2560)
	specialPassword = "p!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ é"
)

// ParseURL's options reach a real server that wants a password, an ACL user
// and TLS; a wrong password, a missing one, an untrusted certificate, and
// TLS spoken to a plain server (and the other way round) are errors that
// say so, through ExplainError, and never hold the password. (TLS spoken to
// a plain server is a timeout: Redis waits for the end of a line that never
// comes.)
func TestParseURLLive(t *testing.T) {
	pwServer := redistest.StartSecure(t, redistest.SecureOptions{Password: longPassword})
	aclServer := redistest.StartSecure(t, redistest.SecureOptions{Password: "admin-pw", User: "app", UserPassword: specialPassword})
	tlsServer := redistest.StartSecure(t, redistest.SecureOptions{TLS: true, Password: "tls-pw"})
	_, err := aclServer.Do("ACL", "SETUSER", "limited", "on", ">limited-pw", "~*", "+@all", "-evalsha", "-eval")
	require.NoError(t, err)
	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte(specialPassword+"\n"), 0o600))
	ca := WithCAFile(tlsServer.CAFile())
	tests := []struct {
		name string
		url  string
		opts []URLOption
		want error // nil: a decision is made
		text string
	}{
		{"requirepass, 10 KiB password in the URL", pwServer.URLWith("", longPassword), nil, nil, ""},
		{"requirepass, password from WithPassword", pwServer.URL(), []URLOption{WithPassword(longPassword)}, nil, ""},
		{"ACL user, special password in the URL", aclServer.URLWith("app", specialPassword), nil, nil, ""},
		{"ACL user, password file", aclServer.URLWith("app", ""), []URLOption{WithPasswordFile(pwFile)}, nil, ""},
		{"TLS with the CA", tlsServer.URLWith("", "tls-pw"), []URLOption{ca}, nil, ""},
		{"TLS by name with the CA", strings.Replace(tlsServer.URLWith("default", "tls-pw"), "127.0.0.1", "localhost", 1), []URLOption{ca}, nil, ""},
		{"wrong password", pwServer.URLWith("", longPassword[1:]), nil, ErrAuth, "WRONGPASS"},
		{"wrong ACL password", aclServer.URLWith("app", "nope"+specialPassword), nil, ErrAuth, "WRONGPASS"},
		{"no password", pwServer.URL(), nil, ErrAuth, "NOAUTH"},
		{"a user the ACL forbids scripts", aclServer.URLWith("limited", "limited-pw"), nil, ErrAuth, "NOPERM"},
		{"TLS without the CA", tlsServer.URLWith("", "tls-pw"), nil, ErrTLS, "authority this client does not trust"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := ParseURL(tt.url, tt.opts...)
			require.NoError(t, err)
			opts.DialTimeout, opts.MaxRetries = 2*time.Second, -1
			client := redis.NewUniversalClient(opts)
			defer client.Close()
			st := newStore(t, client)
			_, err = st.Take(context.Background(), core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(10)}, Cost: 1})
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			explained := ExplainError(err)
			require.ErrorIs(t, explained, tt.want, "%v", err)
			assert.Contains(t, explained.Error(), tt.text)
			for _, pw := range []string{longPassword[:12], specialPassword[:12], "tls-pw"} {
				assert.NotContains(t, explained.Error(), pw)
			}
		})
	}
}

// A plain redis:// URL to a server that speaks TLS only fails with a hint.
func TestExplainErrorPlainToTLS(t *testing.T) {
	tlsServer := redistest.StartSecure(t, redistest.SecureOptions{TLS: true})
	opts, err := ParseURL("redis://" + tlsServer.Addr())
	require.NoError(t, err)
	opts.MaxRetries = -1
	client := redis.NewUniversalClient(opts)
	defer client.Close()
	err = ExplainError(client.Ping(context.Background()).Err())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use rediss://")
	assert.NoError(t, ExplainError(nil))
}

// A redis-sentinel:// URL finds the master through the Sentinel, and the
// store decides on it.
func TestParseURLSentinel(t *testing.T) {
	master, sentinel := redistest.StartSentinel(t)
	opts, err := ParseURL("redis-sentinel://" + sentinel + "/" + redistest.SentinelMaster + "/0?dial_timeout=2s")
	require.NoError(t, err)
	client := redis.NewUniversalClient(opts)
	defer client.Close()
	st := newStore(t, client)
	for i, want := range []bool{true, true, false} {
		d, err := st.Take(context.Background(), core.TakeRequest{Key: "k", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1})
		require.NoError(t, err)
		assert.Equal(t, want, d.Allowed, "request %d", i+1)
	}
	direct := redis.NewClient(&redis.Options{Addr: master.Addr()})
	defer direct.Close()
	keys, err := direct.DBSize(context.Background()).Result()
	require.NoError(t, err)
	assert.Positive(t, keys, "the counter is on the master")
}
