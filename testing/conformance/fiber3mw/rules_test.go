package fiber3mw_test

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// peerAddr is a net.Addr that is whatever the test says the peer is.
type peerAddr string

func (a peerAddr) Network() string { return "tcp" }

func (a peerAddr) String() string { return string(a) }

// newApp serves the conformance app on a real loopback listener, so that a
// client can hang up while its request is held.
func newApp(t *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := fiber3mw.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	return appWith(t, mw, h), nil
}

// rulesApp is newApp around fiber3mw.Middleware(rs), for the conformance cases
// that run a Group and for adaptertest.RunRules.
func rulesApp(t *testing.T, rs httplimit.Handler, h adaptertest.Handler) (*adaptertest.Server, error) {
	mw, err := fiber3mw.Middleware(rs)
	if err != nil {
		return nil, err
	}
	return appWith(t, mw, h), nil
}

// appWith is the conformance app, mw on every route and h answering, on a
// loopback listener.
func appWith(t *testing.T, mw fiber.Handler, h adaptertest.Handler) *adaptertest.Server {
	app := fiber.New(fiber.Config{ReadBufferSize: 1 << 20})
	var inFlight sync.WaitGroup
	app.Use(func(c fiber.Ctx) error {
		inFlight.Add(1)
		defer inFlight.Done()
		if p := c.Get(adaptertest.PeerHeader); p != "" {
			c.RequestCtx().SetRemoteAddr(peerAddr(p))
		}
		return c.Next()
	})
	handle := func(c fiber.Ctx) error {
		d, ok := fiber3mw.DecisionFrom(c)
		body := h(d, ok)
		status := adaptertest.Status(c.Get(adaptertest.StatusHeader))
		adaptertest.SetCost(c.Get(adaptertest.CostHeader), func(k, v string) { c.Set(k, v) })
		if status >= 500 {
			return fiber.NewError(status) // the status Fiber's error handler sends
		}
		return c.Status(status).SendString(body)
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		app.Get(path, mw, handle) // Get also serves HEAD
		app.Post(path, mw, handle)
	}
	return serveOnLoopback(t, app, &inFlight)
}

// serveOnLoopback runs app on a loopback listener. Its Close waits for the requests in
// flight before it shuts the app down, since Fiber's shutdown would end a
// held request by itself, whatever its client did.
func serveOnLoopback(t *testing.T, app *fiber.App, inFlight *sync.WaitGroup) *adaptertest.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	return &adaptertest.Server{
		Do: func(r *http.Request) (*http.Response, error) {
			r.URL.Scheme, r.URL.Host, r.Host = "http", ln.Addr().String(), ""
			return client.Do(r)
		},
		Close: func() {
			tr.CloseIdleConnections()
			done := make(chan struct{})
			go func() { inFlight.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("a request is still in flight 10 s after the test")
			}
			_ = app.Shutdown()
		},
	}
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Middleware: rulesApp, RenderJSON: renderJSON, Disconnects: true})
}

// renderJSON renders with Fiber's c.JSON.
func renderJSON(_ httplimit.ResponseWriter, r keyfuncs.Request, status int, body any) {
	c, _ := fiber3mw.Native(r)
	_ = c.Status(status).JSON(body)
}

func TestConformanceWithRules(t *testing.T) {
	adaptertest.RunRules(t, adaptertest.Adapter{Middleware: rulesApp}, func(doc []byte, st core.Store, clk core.Clock) (httplimit.Handler, error) {
		d, err := rules.Parse(doc, "rules.yaml")
		if err != nil {
			return nil, err
		}
		return rules.New(st, d, rules.WithClock(clk))
	})
}
