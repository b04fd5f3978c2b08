package fiber3mw_test

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The view hands keyfuncs.IP the peer's address (keyfuncs.PeerIPRequest),
// and the key is the one the peer's text gives, in every form fasthttp may
// report the peer in; a unix-socket peer is still no IP (500).
func TestPeerKeys(t *testing.T) {
	ipKey, err := keyfuncs.IP()
	require.NoError(t, err)
	var key string
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerHour(100))
	require.NoError(t, err)
	mw, err := fiber3mw.New(lim, httplimit.WithKey(func(r keyfuncs.Request) (string, error) {
		_, isAddr := r.(keyfuncs.PeerIPRequest)
		assert.True(t, isAddr, "the view gives the peer's address")
		k, err := ipKey(r)
		key = k
		return k, err
	}))
	require.NoError(t, err)
	app := fiber.New()
	app.Use(mw)
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("ok") })
	h := app.Handler()
	for _, tt := range []struct {
		name   string
		peer   net.Addr
		key    string
		status int
	}{
		{"ipv4", &net.TCPAddr{IP: net.IP{203, 0, 113, 7}, Port: 1}, "203.0.113.7", 200},
		{"ipv4 in 16 bytes", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, "192.0.2.1", 200},
		{"ipv4-mapped ipv6", &net.TCPAddr{IP: net.ParseIP("::ffff:198.51.100.9"), Port: 1}, "198.51.100.9", 200},
		{"ipv6, grouped by /64", &net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:3:4:5:6"), Port: 1}, "2001:db8:1:2::/64", 200},
		{"ipv6 with a zone", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0", Port: 1}, "fe80::/64", 200},
		{"unix socket", &net.UnixAddr{Name: "@", Net: "unix"}, "", 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var req fasthttp.Request
			req.Header.SetMethod("GET")
			req.SetRequestURI("/")
			ctx := new(fasthttp.RequestCtx)
			ctx.Init(&req, tt.peer, nil)
			key = "unset"
			h(ctx)
			assert.Equal(t, tt.status, ctx.Response.StatusCode())
			assert.Equal(t, tt.key, key)
		})
	}
}
