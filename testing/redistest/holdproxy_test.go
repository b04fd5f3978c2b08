package redistest

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A held reply reaches its client only once released, while another
// connection through the proxy sees what the held command did.
func TestHoldProxy(t *testing.T) {
	srv := Start(t)
	p := StartHoldProxy(t, srv.Addr())
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr())
		must.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c, bufio.NewReader(c)
	}
	c1, r1 := dial()
	c2, r2 := dial()
	reply, err := roundTrip(c1, r1, "PING")
	must.NoError(t, err)
	must.Equal(t, "PONG", reply)

	held, release := p.HoldNextReply()
	replies := make(chan string, 1)
	go func() {
		reply, err := roundTrip(c1, r1, "INCR", "redistest:hold")
		expect.NoError(t, err)
		replies <- reply
	}()
	select {
	case <-held:
	case <-time.After(startTimeout):
		t.Fatal("no reply held")
	}
	reply, err = roundTrip(c2, r2, "GET", "redistest:hold")
	must.NoError(t, err)
	expect.Equal(t, "1", reply, "the held command ran; the other connection goes on")
	select {
	case r := <-replies:
		t.Fatalf("the held reply %q got through", r)
	default:
	}
	release()
	expect.Equal(t, "1", <-replies)
	release() // twice is harmless
	_, err = command(srv.Addr(), "DEL", "redistest:hold")
	must.NoError(t, err)
}
