package rueidisstore

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The passwords of the managed-Redis tests: every special character, and
// 10 KiB.
var (
	specialPassword = "p!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ é"
	longPassword    = strings.Repeat("Kq7#", 2560)
)

// The rueidis binding decides on a Redis that wants a password, an ACL user
// and TLS with a private CA, with the client options rueidis.ParseURL reads
// from the same URLs the go-redis binding's ParseURL takes (the user and
// password percent-encoded, rediss:// for TLS), the CA set on its TLS
// configuration; a wrong password is refused with WRONGPASS, and a
// certificate of an unknown CA is refused, neither naming the password.
func TestManagedRedis(t *testing.T) {
	pw := redistest.StartSecure(t, redistest.SecureOptions{Password: longPassword})
	acl := redistest.StartSecure(t, redistest.SecureOptions{Password: "admin", User: "app", UserPassword: specialPassword})
	tlsSrv := redistest.StartSecure(t, redistest.SecureOptions{TLS: true, User: "app", UserPassword: specialPassword})
	tests := []struct {
		name    string
		url     string
		rootCAs bool
		want    string // "" for a decision
	}{
		{"requirepass, 10 KiB password", pw.URLWith("", longPassword) + "/0", false, ""},
		{"ACL user, special password", acl.URLWith("app", specialPassword) + "/0", false, ""},
		{"TLS with the CA", tlsSrv.URLWith("app", specialPassword), true, ""},
		{"wrong password", acl.URLWith("app", "x"+specialPassword), false, "WRONGPASS"},
		{"TLS without the CA", tlsSrv.URLWith("app", specialPassword), false, "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt, err := rueidis.ParseURL(tt.url)
			require.NoError(t, err)
			if strings.HasPrefix(tt.url, "rediss://") {
				require.NotNil(t, opt.TLSConfig)
				assert.Equal(t, "127.0.0.1", opt.TLSConfig.ServerName, "the name is checked")
				assert.GreaterOrEqual(t, opt.TLSConfig.MinVersion, uint16(tls.VersionTLS12))
				if tt.rootCAs {
					opt.TLSConfig.RootCAs = tlsSrv.ClientTLS().RootCAs
				}
			}
			opt.DisableCache = true
			client, err := rueidis.NewClient(opt)
			if tt.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.want)
				assert.NotContains(t, err.Error(), specialPassword[:10])
				return
			}
			require.NoError(t, err)
			defer client.Close()
			st := newStore(t, client)
			for i, want := range []bool{true, true, false} {
				d, err := st.Take(context.Background(), core.TakeRequest{Key: "k", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1})
				require.NoError(t, err)
				assert.Equal(t, want, d.Allowed, "request %d", i+1)
			}
		})
	}
}
