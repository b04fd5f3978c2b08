package redistest

import (
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A protected server answers only a client that authenticates (with the
// password, or as the ACL user) and, for TLS, only over TLS; it stays
// protected across a restart.
func TestStartSecure(t *testing.T) {
	s := StartSecure(t, SecureOptions{Password: "pw 1", User: "app", UserPassword: "pw 2", TLS: true})
	must.Equal(t, "rediss://"+s.Addr(), s.URL())
	must.FileExists(t, s.CAFile())
	must.NotNil(t, s.ClientTLS())
	reply, err := s.Do("SET", "k", "v")
	must.NoError(t, err)
	expect.Equal(t, "OK", reply)
	reply, err = s.Do("ACL", "WHOAMI")
	must.NoError(t, err)
	expect.Equal(t, "default", reply)
	_, err = command(s.Addr(), "PING")
	expect.Error(t, err, "the server speaks TLS only")
	expect.Equal(t, "rediss://app:pw%201@"+s.Addr(), s.URLWith("app", "pw 1"))
	expect.Equal(t, "rediss://app@"+s.Addr(), s.URLWith("app", ""))

	s.Restart(t)
	reply, err = s.Do("ACL", "DRYRUN", "app", "GET", "k")
	must.NoError(t, err, "the ACL user is made again")
	expect.Equal(t, "OK", reply)

	plain := StartSecure(t, SecureOptions{Password: "secret"})
	expect.Equal(t, "redis://"+plain.Addr(), plain.URL())
	_, err = command(plain.Addr(), "GET", "k")
	must.ErrorContains(t, err, "NOAUTH")
	reply, err = plain.Do("PING")
	must.NoError(t, err)
	expect.Equal(t, "PONG", reply)
	expect.Empty(t, plain.CAFile())
	expect.Nil(t, plain.ClientTLS())
}
