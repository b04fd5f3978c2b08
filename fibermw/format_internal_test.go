package fibermw

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormatIPv4(t *testing.T) {
	for _, ip := range []net.IP{net.IPv4(192, 0, 2, 1), net.IPv4(0, 0, 0, 0), net.IPv4(255, 255, 255, 255), net.IPv4(10, 0, 100, 9).To4()} {
		assert.Equal(t, ip.String(), formatIPv4(ip.To4()))
	}
}

// Every octet value, in every position, formats as net.IP.String does.
func TestFormatIPv4EveryOctet(t *testing.T) {
	for o := range 256 {
		for pos := range 4 {
			ip := net.IP{1, 22, 133, 4}
			ip[pos] = byte(o)
			if got, want := formatIPv4(ip), ip.String(); got != want {
				t.Fatalf("formatIPv4(%v) = %q, want %q", []byte(ip), got, want)
			}
		}
	}
}
