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

// Every non-IP peer gets ErrPeerNotIP, whose message names the fix.
func TestIPPeerNotIP(t *testing.T) {
	plain, err := keyfuncs.IP()
	must.NoError(t, err)
	tcpOnly, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("0.0.0.0/0", "::/0"))
	must.NoError(t, err)
	for _, peer := range []string{"@", "", "/run/app.sock", "@abstract", "pipe", "1.2.3.4:port"} {
		for name, kf := range map[string]keyfuncs.Func{"no trust": plain, "tcp trust": tcpOnly} {
			t.Run(name+" "+peer, func(t *testing.T) {
				_, err := kf(fakereq.New(peer, "X-Forwarded-For", "198.51.100.1"))
				must.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
				must.ErrorIs(t, err, keyfuncs.ErrKey)
				expect.Contains(t, err.Error(), `WithTrustedProxies("unix")`)
			})
		}
	}
}

func TestIPTrustedUnixSocket(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(keyfuncs.TrustUnixSocket, "10.0.0.0/8"))
	must.NoError(t, err)
	tests := []struct {
		name   string
		peer   string
		header []string
		want   string
	}{
		{"nginx appends the client", "@", []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"trusted hops skipped", "@", []string{"X-Forwarded-For", "203.0.113.9, 10.0.0.3"}, "203.0.113.9"},
		{"no peer name", "", []string{"X-Real-IP", "203.0.113.10"}, "203.0.113.10"},
		{"bound client path", "/tmp/client.sock", []string{"Forwarded", "for=203.0.113.11"}, "203.0.113.11"},
		{"ipv6 client grouped", "@", []string{"X-Forwarded-For", "2001:db8:1:2::7"}, "2001:db8:1:2::/64"},
		{"a TCP peer outside the prefixes is not trusted", "198.51.100.1:5", []string{"X-Forwarded-For", "203.0.113.9"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(fakereq.New(tt.peer, tt.header...))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

// A trusted unix peer that names no client, or a non-IP peer that does not
// look like a unix socket, is still ErrPeerNotIP: never a shared key.
func TestIPTrustedUnixSocketWithoutClient(t *testing.T) {
	kf, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("unix"))
	must.NoError(t, err)
	tests := []struct {
		name   string
		peer   string
		header []string
		msg    string
	}{
		{"no header", "@", nil, "no honoured forwarding header names the client"},
		{"junk header", "@", []string{"X-Forwarded-For", "unknown"}, "no honoured forwarding header"},
		{"not a unix peer", "pipe", []string{"X-Forwarded-For", "203.0.113.9"}, `WithTrustedProxies("unix")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(fakereq.New(tt.peer, tt.header...))
			must.ErrorIs(t, err, keyfuncs.ErrPeerNotIP)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Empty(t, got)
		})
	}
	// Trusting unix sockets trusts no TCP peer.
	got, err := kf(fakereq.New("10.0.0.1:1", "X-Forwarded-For", "203.0.113.9"))
	must.NoError(t, err)
	expect.Equal(t, "10.0.0.1", got)
}

func TestIPTrustedUnixSocketSpelling(t *testing.T) {
	for _, s := range []string{"UNIX", "unix:", "unix:/run/app.sock"} {
		_, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(s))
		must.ErrorIs(t, err, core.ErrInvalidOption, s)
		expect.Contains(t, err.Error(), s)
	}
	// The header errors are not ErrPeerNotIP: they are the client's.
	kf, err := keyfuncs.Header("X-API-Key")
	must.NoError(t, err)
	_, err = kf(fakereq.New("@"))
	expect.False(t, errors.Is(err, keyfuncs.ErrPeerNotIP))
}
