package keyfuncs_test

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func TestIPPeerOnly(t *testing.T) {
	kf, err := keyfuncs.IP()
	must.NoError(t, err)
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
			got, err := kf(fakereq.New(tt.remote))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestIPBadPeer(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("0.0.0.0/0"))
	must.NoError(t, err)
	for _, remote := range []string{"", "@", "pipe", "1.2.3.4:port", "1.2.3.4:", "[::1", "[1.2.3.4]:80", "1.2.3.4%eth0", "999.1.1.1:1", "[::1]x"} {
		t.Run(remote, func(t *testing.T) {
			_, err := kf(fakereq.New(remote, "X-Forwarded-For", "198.51.100.1"))
			must.ErrorIs(t, err, keyfuncs.ErrKey)
		})
	}
}

func TestIPUntrustedPeerIgnoresHeaders(t *testing.T) {
	noTrust, err := keyfuncs.IP()
	must.NoError(t, err)
	otherTrust, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	spoofs := [][]string{
		{"X-Forwarded-For", "1.2.3.4"},
		{"X-Forwarded-For", "10.0.0.1, 1.2.3.4"},
		{"Forwarded", "for=1.2.3.4"},
		{"Forwarded", `for="[2001:db8::1]:80"`},
		{"X-Real-IP", "1.2.3.4"},
		{"X-Forwarded-For", "1.2.3.4", "Forwarded", "for=5.6.7.8", "X-Real-IP", "9.9.9.9"},
	}
	for _, kf := range []keyfuncs.Func{noTrust, otherTrust} {
		for _, h := range spoofs {
			got, err := kf(fakereq.New("198.51.100.23:5555", h...))
			must.NoError(t, err)
			expect.Equal(t, "198.51.100.23", got, "headers %v", h)
		}
	}
}

func TestIPTrustedChains(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8", "2001:db8:ffff::/48", "192.0.2.10"))
	must.NoError(t, err)
	const peer = "10.1.1.1:443"
	tests := []struct {
		name   string
		remote string
		header []string
		want   string
	}{
		{"no header: the peer", peer, nil, "10.1.1.1"},
		{"one hop", peer, []string{"X-Forwarded-For", "198.51.100.1"}, "198.51.100.1"},
		{"client spoof left of the real client", peer, []string{"X-Forwarded-For", "1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"trusted hops skipped", peer, []string{"X-Forwarded-For", "1.2.3.4, 198.51.100.1, 10.2.2.2, 192.0.2.10"}, "198.51.100.1"},
		{"several lines read as one list", peer, []string{"X-Forwarded-For", "1.2.3.4", "X-Forwarded-For", "198.51.100.1, 10.0.0.9", "X-Forwarded-For", "10.0.0.8"}, "198.51.100.1"},
		{"spaces and tabs", peer, []string{"X-Forwarded-For", " 1.2.3.4 ,\t198.51.100.1\t, 10.0.0.3 "}, "198.51.100.1"},
		{"ports", peer, []string{"X-Forwarded-For", "198.51.100.1:5678, 10.0.0.3:80"}, "198.51.100.1"},
		{"ipv6 brackets and port", peer, []string{"X-Forwarded-For", "[2001:db8:1:2::77]:999, [2001:db8:ffff::1]"}, "2001:db8:1:2::/64"},
		{"bare ipv6", peer, []string{"X-Forwarded-For", "2001:db8:1:2::77"}, "2001:db8:1:2::/64"},
		{"mapped ipv4 in header", peer, []string{"X-Forwarded-For", "::ffff:198.51.100.1"}, "198.51.100.1"},
		{"empty elements", peer, []string{"X-Forwarded-For", ",198.51.100.1,, 10.0.0.3,"}, "198.51.100.1"},
		{"all trusted: leftmost", peer, []string{"X-Forwarded-For", "10.9.9.9, 10.0.0.3"}, "10.9.9.9"},
		{"garbage left of the client is never reached", peer, []string{"X-Forwarded-For", "garbage, <script>, 198.51.100.1"}, "198.51.100.1"},
		{"garbage behind trusted hops: the trusted hop right of it", peer, []string{"X-Forwarded-For", "1.2.3.4, garbage, 10.0.0.5, 10.0.0.3"}, "10.0.0.5"},
		{"garbage rightmost: the peer", peer, []string{"X-Forwarded-For", "198.51.100.1, garbage"}, "10.1.1.1"},
		{"only commas: the peer", peer, []string{"X-Forwarded-For", " , ,"}, "10.1.1.1"},
		{"unknown rightmost: the peer", peer, []string{"X-Forwarded-For", "unknown"}, "10.1.1.1"},
		{"trusted ipv6 peer", "[2001:db8:ffff::5]:1", []string{"X-Forwarded-For", "203.0.113.9"}, "203.0.113.9"},
		{"trusted mapped peer", "[::ffff:10.0.0.1]:1", []string{"X-Forwarded-For", "203.0.113.9"}, "203.0.113.9"},
		{"bare trusted address", "192.0.2.10:1", []string{"X-Forwarded-For", "203.0.113.9"}, "203.0.113.9"},
		{"neighbour of the bare trusted address is not trusted", "192.0.2.11:1", []string{"X-Forwarded-For", "203.0.113.9"}, "192.0.2.11"},

		{"forwarded", peer, []string{"Forwarded", "for=198.51.100.1"}, "198.51.100.1"},
		{"forwarded quoted ipv6 with port", peer, []string{"Forwarded", `for="[2001:db8:1:2::5]:4711"`}, "2001:db8:1:2::/64"},
		{"forwarded quoted ipv4 with port", peer, []string{"Forwarded", `for="198.51.100.1:4711";proto=https`}, "198.51.100.1"},
		{"forwarded case and params", peer, []string{"Forwarded", `proto=https;FOR=198.51.100.1;by=10.0.0.3`}, "198.51.100.1"},
		{"forwarded chain", peer, []string{"Forwarded", `for=1.2.3.4, for=198.51.100.1;proto=http, for=10.0.0.4`}, "198.51.100.1"},
		{"forwarded several lines", peer, []string{"Forwarded", `for=1.2.3.4`, "Forwarded", `for=198.51.100.1`, "Forwarded", `for="10.0.0.4"`}, "198.51.100.1"},
		{"forwarded quoted comma", peer, []string{"Forwarded", `for=198.51.100.1;ext="a,b", for=10.0.0.4`}, "198.51.100.1"},
		{"forwarded obfuscated behind trusted", peer, []string{"Forwarded", `for=_hidden, for=10.0.0.4`}, "10.0.0.4"},
		{"forwarded unknown rightmost: the peer", peer, []string{"Forwarded", `for=198.51.100.1, for=unknown`}, "10.1.1.1"},
		{"forwarded obfuscated port", peer, []string{"Forwarded", `for="198.51.100.1:_abc"`}, "198.51.100.1"},
		{"forwarded without for rightmost: the peer", peer, []string{"Forwarded", `for=198.51.100.1, proto=https`}, "10.1.1.1"},
		{"forwarded duplicate for: malformed", peer, []string{"Forwarded", `for=198.51.100.1;for=198.51.100.2`}, "10.1.1.1"},
		{"forwarded unterminated quote: malformed line", peer, []string{"Forwarded", `for="198.51.100.1`}, "10.1.1.1"},
		{"forwarded unterminated quote on its own line", peer, []string{"Forwarded", `for="1.2.3.4`, "Forwarded", "for=198.51.100.1"}, "198.51.100.1"},
		{"forwarded unbracketed unquoted ipv6 tolerated", peer, []string{"Forwarded", `for=2001:db8:1:2::5`}, "2001:db8:1:2::/64"},
		{"forwarded backslash: malformed", peer, []string{"Forwarded", `for="198.51.100.1\"`}, "10.1.1.1"},
		{"forwarded empty for", peer, []string{"Forwarded", `for=""`}, "10.1.1.1"},

		{"x-real-ip", peer, []string{"X-Real-IP", "198.51.100.1"}, "198.51.100.1"},
		{"x-real-ip last line", peer, []string{"X-Real-IP", "1.2.3.4", "X-Real-IP", "198.51.100.1"}, "198.51.100.1"},
		{"x-real-ip list is malformed", peer, []string{"X-Real-IP", "1.2.3.4, 198.51.100.1"}, "10.1.1.1"},
		{"x-real-ip garbage", peer, []string{"X-Real-IP", "nope"}, "10.1.1.1"},

		{"xff wins over forwarded and x-real-ip", peer, []string{"X-Real-IP", "9.9.9.9", "Forwarded", "for=8.8.8.8", "X-Forwarded-For", "198.51.100.1"}, "198.51.100.1"},
		{"forwarded wins over x-real-ip", peer, []string{"X-Real-IP", "9.9.9.9", "Forwarded", "for=198.51.100.1"}, "198.51.100.1"},
		{"malformed xff: next header", peer, []string{"X-Forwarded-For", "junk", "Forwarded", "for=198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(fakereq.New(tt.remote, tt.header...))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestIPWithHeaders(t *testing.T) {
	r := fakereq.New("10.0.0.1:1", "X-Forwarded-For", "198.51.100.1", "Forwarded", "for=198.51.100.2", "X-Real-IP", "198.51.100.3")
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{keyfuncs.HeaderXRealIP}, "198.51.100.3"},
		{[]string{"x-real-ip", "forwarded"}, "198.51.100.3"},
		{[]string{keyfuncs.HeaderForwarded, keyfuncs.HeaderXForwardedFor}, "198.51.100.2"},
		{[]string{keyfuncs.HeaderXForwardedFor}, "198.51.100.1"},
	}
	for _, tt := range tests {
		kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"), keyfuncs.WithForwardingHeaders(tt.names...))
		must.NoError(t, err)
		got, err := kf(r)
		must.NoError(t, err)
		expect.Equal(t, tt.want, got, "%v", tt.names)
	}

	onlyReal, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"), keyfuncs.WithForwardingHeaders(keyfuncs.HeaderXRealIP))
	must.NoError(t, err)
	got, err := onlyReal(fakereq.New("10.0.0.1:1", "X-Forwarded-For", "198.51.100.1"))
	must.NoError(t, err)
	expect.Equal(t, "10.0.0.1", got, "a header that is not named is not read")
}

func TestIPPrefixes(t *testing.T) {
	tests := []struct {
		name   string
		opts   []keyfuncs.Option
		remote string
		want   string
	}{
		{"v6 default /64", nil, "[2001:db8:aa:bb:1:2:3:4]:1", "2001:db8:aa:bb::/64"},
		{"v6 /48", []keyfuncs.Option{keyfuncs.WithIPv6Prefix(48)}, "[2001:db8:aa:bb:1:2:3:4]:1", "2001:db8:aa::/48"},
		{"v6 /128 whole address", []keyfuncs.Option{keyfuncs.WithIPv6Prefix(128)}, "[2001:db8:aa:bb:1:2:3:4]:1", "2001:db8:aa:bb:1:2:3:4"},
		{"v6 /128 canonicalised", []keyfuncs.Option{keyfuncs.WithIPv6Prefix(128)}, "[2001:DB8:0::1]:1", "2001:db8::1"},
		{"v4 /24", []keyfuncs.Option{keyfuncs.WithIPv4Prefix(24)}, "203.0.113.77:1", "203.0.113.0/24"},
		{"v4 prefix does not touch v6", []keyfuncs.Option{keyfuncs.WithIPv4Prefix(24)}, "[2001:db8::1]:1", "2001:db8::/64"},
		{"v6 prefix does not touch mapped v4", []keyfuncs.Option{keyfuncs.WithIPv6Prefix(32)}, "[::ffff:203.0.113.77]:1", "203.0.113.77"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.IP(tt.opts...)
			must.NoError(t, err)
			got, err := kf(fakereq.New(tt.remote))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestIPRotatingIPv6SharesKey(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	addrs := []string{"2001:db8:5:6::1", "2001:db8:5:6:ffff:ffff:ffff:ffff", "2001:db8:5:6:dead:beef:0:1", "2001:db8:5:6:1234::99"}
	for _, a := range addrs {
		got, err := kf(fakereq.New("[" + a + "]:443"))
		must.NoError(t, err)
		expect.Equal(t, "2001:db8:5:6::/64", got, "peer %s", a)
		got, err = kf(fakereq.New("10.0.0.1:1", "X-Forwarded-For", a))
		must.NoError(t, err)
		expect.Equal(t, "2001:db8:5:6::/64", got, "forwarded %s", a)
	}
	other, err := kf(fakereq.New("[2001:db8:5:7::1]:443"))
	must.NoError(t, err)
	expect.Equal(t, "2001:db8:5:7::/64", other, "the next /64 is another client")
}

func TestIPTrustedMappedPrefix(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("::ffff:10.0.0.0/104"))
	must.NoError(t, err)
	got, err := kf(fakereq.New("10.3.3.3:1", "X-Forwarded-For", "198.51.100.1"))
	must.NoError(t, err)
	expect.Equal(t, "198.51.100.1", got)
}

func TestIPInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  keyfuncs.Option
		msg  string
	}{
		{"bad cidr", keyfuncs.WithTrustedProxies("10.0.0.0/33"), "not a CIDR"},
		{"garbage cidr", keyfuncs.WithTrustedProxies("ten/8"), "not a CIDR"},
		{"bad address", keyfuncs.WithTrustedProxies("10.0.0.256"), "not an IP address"},
		{"empty address", keyfuncs.WithTrustedProxies(""), "not an IP address"},
		{"zone", keyfuncs.WithTrustedProxies("fe80::1%eth0"), "not an IP address"},
		{"v6 bits 0", keyfuncs.WithIPv6Prefix(0), "outside 1..128"},
		{"v6 bits 129", keyfuncs.WithIPv6Prefix(129), "outside 1..128"},
		{"v4 bits 0", keyfuncs.WithIPv4Prefix(0), "outside 1..32"},
		{"v4 bits 33", keyfuncs.WithIPv4Prefix(33), "outside 1..32"},
		{"no header", keyfuncs.WithForwardingHeaders(), "no header"},
		{"unknown header", keyfuncs.WithForwardingHeaders("X-Client-IP"), "not one of"},
		{"duplicate header", keyfuncs.WithForwardingHeaders("X-Forwarded-For", "x-forwarded-for"), "named twice"},
		{"nil option", nil, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.IP(tt.opt)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, kf)
		})
	}
}

func TestIPNoAllocOnCommonPaths(t *testing.T) {
	peerOnly, err := keyfuncs.IP()
	must.NoError(t, err)
	trusted, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	r1 := fakereq.New("203.0.113.7:1234")
	r2 := fakereq.New("10.0.0.1:1234", "X-Forwarded-For", "203.0.113.7, 10.0.0.2")
	expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = peerOnly(r1) }))
	expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = trusted(r2) }))
}
