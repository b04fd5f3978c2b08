package keyfuncs_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// validIPKey reports whether k is a key IP can return: a canonical address,
// or a canonical masked prefix.
func validIPKey(k string) bool {
	if a, err := netip.ParseAddr(k); err == nil {
		return a.String() == k && a.Zone() == "" && !a.Is4In6()
	}
	p, err := netip.ParsePrefix(k)
	return err == nil && p.Masked() == p && p.String() == k && !p.Addr().Is4In6()
}

// fuzzIPSeeds are FuzzIP's seeds: peer, X-Forwarded-For, Forwarded and
// X-Real-IP.
var fuzzIPSeeds = [][4]string{
	{"10.0.0.1:1", "198.51.100.1, 10.0.0.2", "", ""},
	{"10.0.0.1:1", "", `for="[2001:db8::1]:80";proto=https, for=10.0.0.3`, ""},
	{"10.0.0.1:1", "", "", "198.51.100.3"},
	{"[::ffff:10.0.0.1]:1", "::ffff:1.2.3.4", "for=_hidden, for=unknown", "junk"},
	{"[fe80::1%eth0]:80", "[fe80::2%25eth1]:5", `for="\"`, ","},
	{"198.51.100.1:2", "1.2.3.4", "for=1.2.3.4", "1.2.3.4"},
	{"", ",,", ";;,", ""},
	{"2001:db8::1", "[::1]:99999", `For="[::1]";for=1.1.1.1`, "[1.2.3.4]"},
	{"@", "198.51.100.1, 10.0.0.2", "", ""},
	{"/run/app.sock", "", "for=unknown", "198.51.100.3"},
}

func FuzzIP(f *testing.F) {
	for _, s := range fuzzIPSeeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	trusted, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8", "fe80::/10", "2001:db8::/48"))
	if err != nil {
		f.Fatal(err)
	}
	wide, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("0.0.0.0/0", "::/0"), keyfuncs.WithIPv6Prefix(128), keyfuncs.WithIPv4Prefix(24))
	if err != nil {
		f.Fatal(err)
	}
	untrusted, err := keyfuncs.IP()
	if err != nil {
		f.Fatal(err)
	}
	unixSocket, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(keyfuncs.TrustUnixSocket, "10.0.0.0/8"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, remote, xff, fwd, real string) {
		withHeaders := fakereq.New(remote, "X-Forwarded-For", xff, "Forwarded", fwd, "X-Real-IP", real)
		bare := fakereq.New(remote)
		for _, kf := range []keyfuncs.Func{trusted, wide, untrusted, unixSocket} {
			k, err := kf(withHeaders)
			if err != nil {
				if !errors.Is(err, keyfuncs.ErrKey) {
					t.Fatalf("error %v does not wrap ErrKey", err)
				}
				if k != "" {
					t.Fatalf("key %q with an error", k)
				}
				continue
			}
			if !validIPKey(k) {
				t.Fatalf("invalid key %q", k)
			}
		}
		// From an untrusted peer the headers never change the key.
		k1, err1 := untrusted(withHeaders)
		k2, err2 := untrusted(bare)
		if k1 != k2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("headers changed the key of an untrusted peer: %q vs %q", k1, k2)
		}
		// Nor from a peer outside the trusted prefixes.
		if peer, err := netip.ParseAddrPort(remote); err == nil && !trustedForFuzz(peer.Addr()) {
			if k3, _ := trusted(withHeaders); k3 != k2 {
				t.Fatalf("headers from untrusted peer %s changed the key: %q vs %q", remote, k3, k2)
			}
		}
	})
}

func trustedForFuzz(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range []string{"10.0.0.0/8", "fe80::/10", "2001:db8::/48"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

// FuzzFrameworkIP feeds FrameworkIP whatever a framework could answer (a
// forwarding header's raw value, say) and whatever the peer is: the result is
// a valid key or an error wrapping ErrKey, and an error wraps ErrPeerNotIP
// only when the peer is not an address.
func FuzzFrameworkIP(f *testing.F) {
	for _, s := range [][2]string{
		{"203.0.113.7", "10.0.0.1:1"},
		{"[2001:db8::1]:80", "@"},
		{"0.0.0.0", "@"},
		{"<nil>", ""},
		{"6.6.6.6, 10.0.0.2", "10.0.0.1:1"},
		{" fe80::1%eth0 ", "/run/app.sock"},
	} {
		f.Add(s[0], s[1])
	}
	kf, err := keyfuncs.FrameworkIP(keyfuncs.WithIPv4Prefix(24))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, answer, peer string) {
		k, err := kf(resolved{fakereq.New(peer), answer})
		if err == nil {
			if !validIPKey(k) {
				t.Fatalf("invalid key %q from %q", k, answer)
			}
			return
		}
		if !errors.Is(err, keyfuncs.ErrKey) || k != "" {
			t.Fatalf("key %q, error %v", k, err)
		}
		if _, perr := netip.ParseAddrPort(peer); perr == nil && errors.Is(err, keyfuncs.ErrPeerNotIP) {
			t.Fatalf("peer %q is an address, yet %v", peer, err)
		}
	})
}
