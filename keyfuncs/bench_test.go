package keyfuncs_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func benchKey(b *testing.B, kf keyfuncs.Func, r keyfuncs.Request) {
	b.Helper()
	if _, err := kf(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = kf(r)
	}
}

func BenchmarkIP(b *testing.B) {
	peerOnly, err := keyfuncs.IP()
	if err != nil {
		b.Fatal(err)
	}
	trusted, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("peer/v4", func(b *testing.B) { benchKey(b, peerOnly, fakereq.New("203.0.113.7:51234")) })
	b.Run("peer/v6", func(b *testing.B) { benchKey(b, peerOnly, fakereq.New("[2001:db8:aa:bb:1:2:3:4]:51234")) })
	b.Run("trusted/xff", func(b *testing.B) {
		benchKey(b, trusted, fakereq.New("10.0.0.1:51234", "X-Forwarded-For", "6.6.6.6, 203.0.113.7, 10.0.0.2"))
	})
	b.Run("trusted/xff-v6", func(b *testing.B) {
		benchKey(b, trusted, fakereq.New("10.0.0.1:51234", "X-Forwarded-For", "2001:db8:aa:bb:1:2:3:4, 10.0.0.2"))
	})
	b.Run("trusted/forwarded", func(b *testing.B) {
		benchKey(b, trusted, fakereq.New("10.0.0.1:51234", "Forwarded", `for=203.0.113.7;proto=https, for="10.0.0.2:80"`))
	})
	b.Run("trusted/no-header", func(b *testing.B) { benchKey(b, trusted, fakereq.New("10.0.0.1:51234")) })
}

func BenchmarkHeader(b *testing.B) {
	kf, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		b.Fatal(err)
	}
	benchKey(b, kf, fakereq.New("203.0.113.7:1", "X-API-Key", "team-42-key"))
}

func BenchmarkCompose(b *testing.B) {
	ip, err := keyfuncs.IP()
	if err != nil {
		b.Fatal(err)
	}
	kf, err := keyfuncs.Compose(ip, keyfuncs.Route())
	if err != nil {
		b.Fatal(err)
	}
	r := fakereq.New("203.0.113.7:1")
	r.RoutePattern = "GET /users/{id}"
	benchKey(b, kf, r)
}

// BenchmarkIPNetHTTP measures IP through a keyfuncs.Request view of a
// *http.Request, as the stdhttp adapter gives it, header lookups included.
func BenchmarkIPNetHTTP(b *testing.B) {
	peerOnly, err := keyfuncs.IP()
	if err != nil {
		b.Fatal(err)
	}
	trusted, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	b.Run("peer", func(b *testing.B) { benchKey(b, peerOnly, stdhttp.View(r)) })
	rx := httptest.NewRequest(http.MethodGet, "/", nil)
	rx.RemoteAddr = "10.0.0.1:51234"
	rx.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.7, 10.0.0.2")
	b.Run("trusted-xff", func(b *testing.B) { benchKey(b, trusted, stdhttp.View(rx)) })
}
