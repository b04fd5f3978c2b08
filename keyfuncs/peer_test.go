package keyfuncs_test

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// addrRequest is a request view over a server that reports the peer as a
// net.Addr, built as the Fiber adapters build theirs: RemoteAddr is
// httplimit.PeerAddr's text, PeerIP httplimit.PeerIP's address.
type addrRequest struct {
	*fakereq.Request
	addr net.Addr
}

var _ keyfuncs.PeerIPRequest = addrRequest{}

func (r addrRequest) RemoteAddr() string         { return httplimit.PeerAddr(r.addr) }
func (r addrRequest) PeerIP() (netip.Addr, bool) { return httplimit.PeerIP(r.addr) }
func newAddrRequest(addr net.Addr, kv ...string) addrRequest {
	return addrRequest{fakereq.New("", kv...), addr}
}

// textOnly is the same request seen through RemoteAddr's text alone, as
// keyfuncs.IP read it before PeerIPRequest: the key both give must be one.
func textOnly(r addrRequest) *fakereq.Request {
	t := *r.Request
	t.Remote = httplimit.PeerAddr(r.addr)
	return &t
}

func tcp(ip string, zone string) *net.TCPAddr {
	return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000, Zone: zone}
}

// The key of a peer read as an address is the key of its text, whatever the
// form the server reports it in: IPv4 in 4 or 16 bytes, IPv4-mapped IPv6,
// IPv6 with a zone, a peer that is not TCP (its text is read), a unix socket.
func TestIPPeerAddress(t *testing.T) {
	plain, err := keyfuncs.IP()
	must.NoError(t, err)
	trustUnix, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(keyfuncs.TrustUnixSocket))
	must.NoError(t, err)
	tests := []struct {
		name string
		kf   keyfuncs.Func
		addr net.Addr
		kv   []string
		want string // "" for ErrPeerNotIP
	}{
		{"ipv4, 4 bytes", plain, &net.TCPAddr{IP: net.IP{203, 0, 113, 7}, Port: 1}, nil, "203.0.113.7"},
		{"ipv4, 16 bytes", plain, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, nil, "192.0.2.1"},
		{"ipv4-mapped ipv6", plain, tcp("::ffff:198.51.100.9", ""), nil, "198.51.100.9"},
		{"ipv4 zero octets", plain, tcp("10.0.0.0", ""), nil, "10.0.0.0"},
		{"ipv6 grouped by /64", plain, tcp("2001:db8:1:2:3:4:5:6", ""), nil, "2001:db8:1:2::/64"},
		{"ipv6 with a zone", plain, tcp("fe80::1", "eth0"), nil, "fe80::/64"},
		{"ipv6 loopback", plain, tcp("::1", ""), nil, "::/64"},
		{"udp peer read as text", plain, &net.UDPAddr{IP: net.IP{198, 51, 100, 1}, Port: 53}, nil, "198.51.100.1"},
		{"tcp peer without an ip", plain, &net.TCPAddr{Port: 1}, nil, ""},
		{"no peer", plain, nil, nil, ""},
		{"unix peer", plain, &net.UnixAddr{Name: "@", Net: "unix"}, []string{"X-Forwarded-For", "203.0.113.9"}, ""},
		{"trusted unix peer names the client", trustUnix, &net.UnixAddr{Name: "@", Net: "unix"}, []string{"X-Forwarded-For", "203.0.113.9"}, "203.0.113.9"},
		{"trusted unix does not trust tcp", trustUnix, tcp("198.51.100.1", ""), []string{"X-Forwarded-For", "203.0.113.9"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newAddrRequest(tt.addr, tt.kv...)
			got, err := tt.kf(r)
			fromText, textErr := tt.kf(textOnly(r))
			if tt.want == "" {
				must.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
				must.ErrorIs(t, textErr, keyfuncs.ErrPeerNotIP)
				return
			}
			must.NoError(t, err)
			must.NoError(t, textErr)
			expect.Equal(t, tt.want, got)
			expect.Equal(t, fromText, got, "the key of the peer's text")
		})
	}
}

// Forwarding headers are believed only from a trusted proxy, when the peer is
// read as an address too; an IPv4-mapped proxy matches its IPv4 prefix, and
// "::/0" trusts no IPv4 peer.
func TestIPPeerAddressTrustedProxies(t *testing.T) {
	v4, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	v6, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("::/0"))
	must.NoError(t, err)
	tests := []struct {
		name string
		kf   keyfuncs.Func
		addr net.Addr
		kv   []string
		want string
	}{
		{"trusted proxy", v4, tcp("10.0.0.1", ""), []string{"X-Forwarded-For", "203.0.113.7, 10.0.0.2"}, "203.0.113.7"},
		{"trusted mapped proxy", v4, tcp("::ffff:10.0.0.1", ""), []string{"X-Real-IP", "203.0.113.8"}, "203.0.113.8"},
		{"untrusted peer spoofs", v4, tcp("198.51.100.1", ""), []string{"X-Forwarded-For", "203.0.113.7"}, "198.51.100.1"},
		{"untrusted ipv6 peer spoofs", v4, tcp("2001:db8::1", ""), []string{"Forwarded", "for=203.0.113.7"}, "2001:db8::/64"},
		{"::/0 trusts ipv6", v6, tcp("2001:db8::1", ""), []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"::/0 trusts no ipv4", v6, tcp("198.51.100.1", ""), []string{"X-Forwarded-For", "203.0.113.7"}, "198.51.100.1"},
		{"::/0 trusts no mapped ipv4", v6, tcp("::ffff:198.51.100.1", ""), []string{"X-Forwarded-For", "203.0.113.7"}, "198.51.100.1"},
		{"trusted proxy, no header", v4, tcp("10.0.0.1", ""), nil, "10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newAddrRequest(tt.addr, tt.kv...)
			got, err := tt.kf(r)
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
			fromText, err := tt.kf(textOnly(r))
			must.NoError(t, err)
			expect.Equal(t, fromText, got, "the key of the peer's text")
		})
	}
}

// Random peers in every form, under every prefix option: the key read from
// the address is the key read from the text.
func TestIPPeerAddressMatchesText(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	var kfs []keyfuncs.Func
	for _, opts := range [][]keyfuncs.Option{
		nil,
		{keyfuncs.WithIPv4Prefix(24)},
		{keyfuncs.WithIPv4Prefix(1), keyfuncs.WithIPv6Prefix(128)},
		{keyfuncs.WithIPv6Prefix(48)},
		{keyfuncs.WithTrustedProxies("10.0.0.0/8", "2001:db8::/32")},
	} {
		kf, err := keyfuncs.IP(opts...)
		must.NoError(t, err)
		kfs = append(kfs, kf)
	}
	for i := range 20_000 {
		var ip net.IP
		zone := ""
		switch i % 4 {
		case 0:
			ip = net.IP{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())}
		case 1:
			ip = net.IPv4(byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()))
		case 2:
			ip = make(net.IP, 16)
			for j := range ip {
				ip[j] = byte(rng.Uint32())
			}
			if rng.IntN(2) == 0 {
				ip[0], ip[1], ip[2], ip[3] = 0x20, 0x01, 0x0d, 0xb8
			}
		default:
			ip = make(net.IP, 16)
			ip[0], ip[1], ip[15] = 0xfe, 0x80, byte(rng.Uint32())
			zone = "eth0"
		}
		r := newAddrRequest(&net.TCPAddr{IP: ip, Port: 443, Zone: zone}, "X-Forwarded-For", "203.0.113.7")
		for k, kf := range kfs {
			got, err := kf(r)
			must.NoError(t, err)
			want, err := kf(textOnly(r))
			must.NoError(t, err)
			if got != want {
				t.Fatalf("key function %d, peer %v%%%s: %q from the address, %q from the text", k, ip, zone, got, want)
			}
		}
	}
}

// A returning IPv4 client, read as an address, is keyed without an
// allocation, directly and behind a trusted proxy.
func TestIPPeerAddressNoAlloc(t *testing.T) {
	plain, err := keyfuncs.IP()
	must.NoError(t, err)
	trusted, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	must.NoError(t, err)
	// Boxed once, as an adapter's one-pointer view needs not be.
	var r1 keyfuncs.Request = newAddrRequest(&net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 1})
	var r2 keyfuncs.Request = newAddrRequest(tcp("10.0.0.1", ""), "X-Forwarded-For", "203.0.113.7, 10.0.0.2")
	expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = plain(r1) }))
	expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = trusted(r2) }))
}

// A view that reports a mapped address or a zone despite PeerIPRequest's
// contract is keyed as its text would be.
type sloppyPeer struct {
	*fakereq.Request
	addr netip.Addr
}

func (r sloppyPeer) PeerIP() (netip.Addr, bool) { return r.addr, true }

func TestIPPeerAddressNormalised(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithIPv6Prefix(128))
	must.NoError(t, err)
	for addr, want := range map[string]string{
		"::ffff:192.0.2.1": "192.0.2.1",
		"fe80::1%eth0":     "fe80::1",
	} {
		got, err := kf(sloppyPeer{fakereq.New(addr), netip.MustParseAddr(addr)})
		must.NoError(t, err)
		expect.Equal(t, want, got, addr)
	}
}
