package fibermw_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/adaptertest"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fibermw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// peerAddr is a net.Addr that is whatever the test says the peer is.
type peerAddr string

func (a peerAddr) Network() string { return "tcp" }
func (a peerAddr) String() string  { return string(a) }

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := fibermw.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{ReadBufferSize: 1 << 20, DisableStartupMessage: true})
	app.Use(func(c *fiber.Ctx) error {
		if p := c.Get(adaptertest.PeerHeader); p != "" {
			c.Context().SetRemoteAddr(peerAddr(p))
		}
		return c.Next()
	})
	handle := func(c *fiber.Ctx) error {
		d, ok := fibermw.DecisionFrom(c)
		return c.SendString(h(d, ok))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		app.Get(path, mw, handle) // Get also serves HEAD
		app.Post(path, mw, handle)
	}
	return &adaptertest.Server{Do: func(r *http.Request) (*http.Response, error) { return app.Test(r, -1) }}, nil
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp})
}
