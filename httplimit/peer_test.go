package httplimit

import (
	"net"
	"net/netip"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
)

// PeerIP gives a TCP peer's address, IPv4-mapped ones as IPv4 and without
// the zone, which is the address PeerAddr writes; any other peer is read from
// PeerAddr's text.
func TestPeerIP(t *testing.T) {
	tests := []struct {
		name string
		addr net.Addr
		ip   string // "" when PeerIP answers false
		text string
	}{
		{"ipv4, 4 bytes", &net.TCPAddr{IP: net.IP{203, 0, 113, 7}, Port: 1}, "203.0.113.7", "203.0.113.7"},
		{"ipv4, 16 bytes", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, "192.0.2.1", "192.0.2.1"},
		{"ipv4-mapped", &net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3")}, "10.1.2.3", "10.1.2.3"},
		{"ipv6", &net.TCPAddr{IP: net.ParseIP("2001:db8::7"), Port: 443}, "2001:db8::7", "2001:db8::7"},
		{"ipv6 with a zone", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, "fe80::1", "fe80::1"},
		{"tcp without an ip", &net.TCPAddr{Port: 1}, "", "<nil>"},
		{"tcp with a broken ip", &net.TCPAddr{IP: net.IP{1, 2, 3}}, "", "?010203"},
		{"udp", &net.UDPAddr{IP: net.IP{198, 51, 100, 1}, Port: 53}, "", "198.51.100.1:53"},
		{"unix", &net.UnixAddr{Name: "@", Net: "unix"}, "", "@"},
		{"none", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip, ok := PeerIP(tt.addr)
			expect.Equal(t, tt.ip != "", ok)
			if ok {
				expect.Equal(t, netip.MustParseAddr(tt.ip), ip)
			}
			expect.Equal(t, tt.text, PeerAddr(tt.addr))
		})
	}
}
