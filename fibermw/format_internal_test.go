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
