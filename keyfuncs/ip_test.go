package keyfuncs_test

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIPPeerOnly(t *testing.T) {
	kf, err := keyfuncs.IP()
	require.NoError(t, err)
	tests := []struct {
		name, remote, want string
	}{
		{"ipv4 with port", "203.0.113.7:1234", "203.0.113.7"},
		{"bare ipv4", "203.0.113.7", "203.0.113.7"},
		{"ipv6 with port", "[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"bare ipv6", "2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"bracketed ipv6 no port", "[2001:db8::1]", "2001:db8::/64"},
		{"ipv4-mapped", "[::ffff:192.0.2.1]:80", "192.0.2.1"},
		{"bare ipv4-mapped", "::ffff:192.0.2.1", "192.0.2.1"},
		{"zone stripped", "[fe80::1%eth0]:80", "fe80::/64"},
		{"non-canonical ipv6", "[2001:DB8:0:0:1::1]:1", "2001:db8::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(newReq(tt.remote))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestIPBadPeer(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("0.0.0.0/0"))
	require.NoError(t, err)
	for _, remote := range []string{"", "@", "pipe", "1.2.3.4:port", "1.2.3.4:", "[::1", "[1.2.3.4]:80", "1.2.3.4%eth0", "999.1.1.1:1", "[::1]x"} {
		t.Run(remote, func(t *testing.T) {
			_, err := kf(newReq(remote, "X-Forwarded-For", "198.51.100.1"))
			require.ErrorIs(t, err, core.ErrKey)
		})
	}
}
