package fiber3mw_test

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A client that hangs up while its request is held stops the hold, on a real
// server and a real connection: fasthttp reports no hang-up, so the
// middleware peeks at the connection while it holds the request. The handler
// never runs, and the server is not shut down to end the hold (a shutdown
// would end it by itself). A client that stays is served at the end of its
// hold, and keeps its connection for the next request.
func TestAClientThatHangsUpStopsTheHold(t *testing.T) {
	for _, tt := range []struct {
		name   string
		hangUp bool
		hold   core.Limit
	}{
		{"the client hangs up", true, core.PerHour(1).WithBurst(5)},
		{"the client stays", false, core.PerSecond(4).WithBurst(5)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startHoldingServer(t, tt.hold)
			conn, err := net.Dial("tcp", srv.addr)
			require.NoError(t, err)
			defer conn.Close()
			br := bufio.NewReader(conn)
			get(t, conn, br, 200) // admitted at once: the queue's first
			<-srv.decided
			<-srv.returned
			assert.Equal(t, int64(1), srv.handled.Load())

			_, err = conn.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n\r\n"))
			require.NoError(t, err)
			<-srv.decided // and about to be held (1 h, or 250 ms)
			if !tt.hangUp {
				assert.Equal(t, 200, readResponse(t, br).StatusCode, "served at the end of its hold")
				<-srv.returned
				assert.Equal(t, int64(2), srv.handled.Load())
				get(t, conn, br, 200) // the connection still serves: the checks consumed nothing
				assert.Equal(t, int64(3), srv.handled.Load())
				return
			}
			require.NoError(t, conn.Close())
			select {
			case <-srv.returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the held request still waits after its client hung up")
			}
			assert.Equal(t, int64(1), srv.handled.Load(), "the handler never ran for the client that left")
		})
	}
}

// holdingServer is a Fiber app on a real listener behind a leaky bucket.
type holdingServer struct {
	addr     string
	decided  chan struct{} // a request was decided (observer)
	returned chan struct{} // a held request's middleware returned
	handled  atomic.Int64
}

// startHoldingServer serves GET / behind fiber3mw with a leaky bucket of
// limit on a memory store, on a loopback listener, until the test ends.
func startHoldingServer(t *testing.T, limit core.Limit) *holdingServer {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.LeakyBucket, limit)
	require.NoError(t, err)
	s := &holdingServer{decided: make(chan struct{}, 4), returned: make(chan struct{}, 4)}
	mw, err := fiber3mw.New(lim, httplimit.WithObserver(httplimit.ObserverFunc(func(httplimit.Event) {
		s.decided <- struct{}{}
	})))
	require.NoError(t, err)
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		err := c.Next()
		s.returned <- struct{}{}
		return err
	})
	app.Get("/", mw, func(c fiber.Ctx) error {
		s.handled.Add(1)
		return c.SendString("ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.addr = ln.Addr().String()
	go func() { _ = app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return s
}

// get sends GET / on conn and requires status.
func get(t *testing.T, conn net.Conn, br *bufio.Reader, status int) {
	t.Helper()
	_, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n\r\n"))
	require.NoError(t, err)
	require.Equal(t, status, readResponse(t, br).StatusCode)
}

func readResponse(t *testing.T, br *bufio.Reader) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp
}
