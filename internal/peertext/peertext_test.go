package peertext

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// u32 is ip (4 bytes) as IPv4 takes it.
func u32(ip net.IP) uint32 { return binary.BigEndian.Uint32(ip.To4()) }

func TestIPv4(t *testing.T) {
	var c cache
	for _, ip := range []net.IP{net.IPv4(192, 0, 2, 1), net.IPv4(0, 0, 0, 0), net.IPv4(255, 255, 255, 255), net.IPv4(10, 0, 100, 9)} {
		expect.Equal(t, ip.String(), c.ipv4(u32(ip)))
		expect.Equal(t, ip.String(), c.ipv4(u32(ip)), "from the cache")
		expect.Equal(t, ip.String(), IPv4(u32(ip)), "the shared cache")
	}
}

// Every octet value, in every position, formats as net.IP.String does, both
// when the cache formats it and when it returns the cached text.
func TestIPv4EveryOctet(t *testing.T) {
	var c cache
	for pass := range 2 {
		for o := range 256 {
			for pos := range 4 {
				ip := net.IP{1, 22, 133, 4}
				ip[pos] = byte(o)
				if got, want := c.ipv4(u32(ip)), ip.String(); got != want {
					t.Fatalf("pass %d: text of %v = %q, want %q", pass, []byte(ip), got, want)
				}
			}
		}
	}
}

// Addresses that share a slot replace each other and never return each
// other's text; text handed out earlier stays intact.
func TestCacheCollisions(t *testing.T) {
	var c cache
	first := net.IP{203, 0, 113, 7}
	var other net.IP
	for i := range 1 << 20 {
		ip := net.IP{byte(i >> 16), byte(i >> 8), byte(i), 1}
		if !ip.Equal(first) && slotOf(u32(ip)) == slotOf(u32(first)) {
			other = ip
			break
		}
	}
	must.NotNil(t, other, "no address shares a slot with %v", first)
	a := c.ipv4(u32(first))
	b := c.ipv4(u32(other))
	expect.Equal(t, other.String(), b)
	expect.Equal(t, first.String(), c.ipv4(u32(first)))
	expect.Equal(t, first.String(), a, "earlier text unchanged")
	expect.Equal(t, other.String(), b, "earlier text unchanged")
}

// Many goroutines formatting colliding addresses each get their own text (run
// with -race).
func TestCacheConcurrent(t *testing.T) {
	var c cache
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				ip := net.IP{10, byte(g), byte(i >> 8), byte(i)}
				if got, want := c.ipv4(u32(ip)), ip.String(); got != want {
					t.Errorf("text of %v = %q, want %q", []byte(ip), got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkIPv4 prices the cache against formatting the address with
// netip.Addr.AppendTo on every request (the text must be a string that
// outlives fasthttp's buffers, so that costs an allocation). Set beside the
// Fiber rows of benchmarks/ (same run), it says whether the cache earns its
// keep: it must save at least a tenth of a Fiber request.
func BenchmarkIPv4(b *testing.B) {
	ip := net.IPv4(203, 0, 113, 7).To4()
	b.Run("cache", func(b *testing.B) {
		var c cache
		b.ReportAllocs()
		for b.Loop() {
			sink = c.ipv4(u32(ip))
		}
	})
	b.Run("netip-appendto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, _ := netip.AddrFromSlice(ip)
			var buf [len("255.255.255.255")]byte
			sink = string(a.AppendTo(buf[:0]))
		}
	})
}

// sink keeps the benchmarks' results alive.
var sink string
