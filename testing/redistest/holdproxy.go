package redistest

import (
	"net"
	"sync"
	"testing"
)

// HoldProxy is a TCP proxy between clients and a Redis server that can hold
// a reply: the bytes the server sends next, on whichever connection, are
// kept from their client until the test releases them, while every other
// connection goes on. A test sends a call through it, holds the reply,
// changes Redis through another connection, and releases the reply: the
// client then reads an answer Redis gave before the change. It is a real
// proxy (bytes pass as the server sent them); each connection is pumped in
// order, so a held reply holds the ones after it on its connection.
type HoldProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	armed   *hold // the hold the next reply takes, if any
	conns   []net.Conn
	closed  bool
	pending []*hold // holds taken and not released, released on Close
}

// hold is one held reply: held is closed when a reply is held, release
// lets it go.
type hold struct {
	held, release chan struct{}
	once          sync.Once
}

func (h *hold) let() { h.once.Do(func() { close(h.release) }) }

// StartHoldProxy listens on a free loopback port and proxies every
// connection to target (host:port); it stops when t ends.
func StartHoldProxy(t testing.TB, target string) *HoldProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: hold proxy: %v", err)
	}
	p := &HoldProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the address clients dial, host:port.
func (p *HoldProxy) Addr() string { return p.ln.Addr().String() }

// HoldNextReply arms the proxy: the next bytes any server connection sends
// are held. held is closed once they are; release (which may be called more
// than once, and before they are held) lets them go to their client.
func (p *HoldProxy) HoldNextReply() (held <-chan struct{}, release func()) {
	h := &hold{held: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.armed = h
	p.pending = append(p.pending, h)
	p.mu.Unlock()
	return h.held, h.let
}

// Close stops listening, releases what is held and closes every connection.
func (p *HoldProxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns, pending := p.conns, p.pending
	p.conns, p.pending, p.armed = nil, nil, nil
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, h := range pending {
		h.let()
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func (p *HoldProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		go p.pump(server, client, false)
		go p.pump(client, server, true)
	}
}

// track notes a connection pair for Close, or closes it when the proxy is
// closed already.
func (p *HoldProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	p.conns = append(p.conns, conns...)
	return true
}

// pump copies from src to dst until either fails; replies (from the server)
// pass through the hold.
func (p *HoldProxy) pump(dst, src net.Conn, replies bool) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && replies {
			p.maybeHold()
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF or a closed connection: the pair ends
			return
		}
	}
}

// maybeHold takes the armed hold, if any, and waits for its release.
func (p *HoldProxy) maybeHold() {
	p.mu.Lock()
	h := p.armed
	p.armed = nil
	p.mu.Unlock()
	if h == nil {
		return
	}
	close(h.held)
	<-h.release
}
