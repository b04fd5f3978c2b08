package keyfuncs

import (
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
)

func TestCanonicalIPv4(t *testing.T) {
	for _, tt := range []struct {
		in   string
		host string
		ok   bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1:1234", "192.0.2.1", true},
		{"0.0.0.0:0", "0.0.0.0", true},
		{"255.255.255.255:65535", "255.255.255.255", true},
		{"10.0.0.1:_hidden", "10.0.0.1", true},
		{"256.0.0.1", "", false},
		{"01.2.3.4", "", false},
		{"1.2.3", "", false},
		{"1.2.3.4.5", "", false},
		{"1.2.3.4:", "", false},
		{"1.2.3.4:123456", "", false},
		{"1.2.3.4:1:2", "", false},
		{"1.2.3.4%eth0", "", false},
		{"1.2.3.4 ", "", false},
		{"[1.2.3.4]:80", "", false},
		{"::ffff:1.2.3.4", "", false},
		{"", "", false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			_, host, ok := canonicalIPv4(tt.in)
			expect.Equal(t, tt.ok, ok)
			expect.Equal(t, tt.host, host)
		})
	}
}

// canonicalIPv4 is a fast path of parseHostPort: whatever it accepts,
// parseHostPort reads the same way, as an address already in canonical form.
func FuzzCanonicalIPv4(f *testing.F) {
	for _, s := range []string{"192.0.2.1:1234", "0.0.0.0", "1.2.3.4:_x", "01.2.3.4", "1.2.3.4:1:2", "999.1.1.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, host, ok := canonicalIPv4(s)
		if !ok {
			return
		}
		b, text, ok2 := parseHostPort(s)
		if !ok2 || a != b || host != text || a.String() != host {
			t.Fatalf("%q: fast path %v %q, parseHostPort %v %q %v", s, a, host, b, text, ok2)
		}
	})
}
