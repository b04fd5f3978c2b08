package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A protected server answers only a client that authenticates (with the
// password, or as the ACL user) and, for TLS, only over TLS; it stays
// protected across a restart.
func TestStartSecure(t *testing.T) {
	s := StartSecure(t, SecureOptions{Password: "pw 1", User: "app", UserPassword: "pw 2", TLS: true})
	require.Equal(t, "rediss://"+s.Addr(), s.URL())
	require.FileExists(t, s.CAFile())
	require.NotNil(t, s.ClientTLS())
	reply, err := s.Do("SET", "k", "v")
	require.NoError(t, err)
	assert.Equal(t, "OK", reply)
	reply, err = s.Do("ACL", "WHOAMI")
	require.NoError(t, err)
	assert.Equal(t, "default", reply)
	_, err = command(s.Addr(), "PING")
	assert.Error(t, err, "the server speaks TLS only")
	assert.Equal(t, "rediss://app:pw%201@"+s.Addr(), s.URLWith("app", "pw 1"))
	assert.Equal(t, "rediss://app@"+s.Addr(), s.URLWith("app", ""))

	s.Restart(t)
	reply, err = s.Do("ACL", "DRYRUN", "app", "GET", "k")
	require.NoError(t, err, "the ACL user is made again")
	assert.Equal(t, "OK", reply)

	plain := StartSecure(t, SecureOptions{Password: "secret"})
	assert.Equal(t, "redis://"+plain.Addr(), plain.URL())
	_, err = command(plain.Addr(), "GET", "k")
	require.ErrorContains(t, err, "NOAUTH")
	reply, err = plain.Do("PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)
	assert.Empty(t, plain.CAFile())
	assert.Nil(t, plain.ClientTLS())
}
