package keyfuncs_test

import (
	"errors"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// resolved is a request whose framework resolved the client IP as ip.
type resolved struct {
	*fakereq.Request
	ip string
}

func (r resolved) ClientIP() string { return r.ip }

func resolvedFrom(peer, ip string) resolved { return resolved{fakereq.New(peer), ip} }

func TestFrameworkIP(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP()
	must.NoError(t, err)
	tests := []struct {
		name, peer, ip, want string
	}{
		{"ipv4", "10.0.0.1:1", "203.0.113.7", "203.0.113.7"},
		{"ipv4 with port", "10.0.0.1:1", "203.0.113.7:443", "203.0.113.7"},
		{"spaces", "10.0.0.1:1", " 203.0.113.7\t", "203.0.113.7"},
		{"ipv6 grouped", "10.0.0.1:1", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"bracketed ipv6", "10.0.0.1:1", "[2001:db8::1]", "2001:db8::/64"},
		{"ipv4-mapped", "10.0.0.1:1", "::ffff:192.0.2.1", "192.0.2.1"},
		{"zone dropped", "10.0.0.1:1", "fe80::1%eth0", "fe80::/64"},
		{"unix peer, framework found the client", "@", "198.51.100.4", "198.51.100.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(resolvedFrom(tt.peer, tt.ip))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestFrameworkIPPrefixes(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP(keyfuncs.WithIPv4Prefix(24), keyfuncs.WithIPv6Prefix(48))
	must.NoError(t, err)
	for ip, want := range map[string]string{"203.0.113.7": "203.0.113.0/24", "2001:db8:1:2::9": "2001:db8:1::/48"} {
		got, err := kf(resolvedFrom("10.0.0.1:1", ip))
		must.NoError(t, err)
		expect.Equal(t, want, got)
	}
}

func TestFrameworkIPRefusesJunk(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP()
	must.NoError(t, err)
	tests := []struct {
		name, peer, ip string
		peerNotIP      bool
	}{
		{"empty", "10.0.0.1:1", "", false},
		{"a list (Fiber's raw X-Forwarded-For)", "10.0.0.1:1", "198.51.100.1, 10.0.0.2", false},
		{"a name", "10.0.0.1:1", "unknown", false},
		{"unspecified v4", "10.0.0.1:1", "0.0.0.0", false},
		{"unspecified v6", "10.0.0.1:1", "::", false},
		{"gin on a unix socket without a header", "@", "<nil>", true},
		{"echo on a unix socket without a header", "@", "", true},
		{"fiber on a unix socket without a header", "@", "0.0.0.0", true},
		{"no peer", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(resolvedFrom(tt.peer, tt.ip))
			must.ErrorIs(t, err, keyfuncs.ErrKey)
			expect.Equal(t, tt.peerNotIP, errors.Is(err, keyfuncs.ErrPeerNotIP), err.Error())
			expect.Empty(t, got)
		})
	}
}

// net/http resolves no client IP: the error says what to use instead.
func TestFrameworkIPWithoutResolver(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP()
	must.NoError(t, err)
	_, err = kf(fakereq.New("203.0.113.7:1"))
	must.ErrorIs(t, err, keyfuncs.ErrKey)
	expect.Contains(t, err.Error(), "use keyfuncs.IP, with WithTrustedProxies")
}

func TestFrameworkIPInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  keyfuncs.Option
		msg  string
	}{
		{"trusted proxies", keyfuncs.WithTrustedProxies("10.0.0.0/8"), "name the proxies to the framework"},
		{"forwarding headers", keyfuncs.WithForwardingHeaders("X-Real-IP"), "applies to IP only"},
		{"max value length", keyfuncs.WithMaxValueLength(10), "applies to Header and ContextValue only"},
		{"v4 bits", keyfuncs.WithIPv4Prefix(33), "outside 1..32"},
		{"v6 bits", keyfuncs.WithIPv6Prefix(0), "outside 1..128"},
		{"nil option", nil, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.FrameworkIP(tt.opt)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, kf)
		})
	}
}
