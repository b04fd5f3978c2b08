package stdhttp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"

	"github.com/ratewarden/ratewarden/httplimit"
)

// statusWriter records the status a handler sends, for a policy that refunds
// (httplimit.WithRefund); no other request pays for it. When the handler
// sends its status (WriteHeader, or the first Write or Flush), it settles the
// refund before the headers go out, so that they tell the quota after it. It
// passes Flush and Hijack through (so streaming handlers and WebSocket
// upgrades work as before) and Unwrap gives the writer it wraps, for
// http.ResponseController and its other methods.
type statusWriter struct {
	http.ResponseWriter
	pass    httplimit.Pass
	status  int
	settled bool
}

// settle settles the request's refund for status, once, while the headers
// are still unsent.
func (w *statusWriter) settle(status int) {
	if !w.settled {
		w.settled = true
		w.pass.Settle(status, w.ResponseWriter)
	}
}

// WriteHeader records the first final status, settles the refund for it,
// and sends it.
func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
		w.settle(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write sends b, with status 200 when no status was sent before.
func (w *statusWriter) Write(b []byte) (int, error) {
	w.implicitOK()
	return w.ResponseWriter.Write(b)
}

// Flush sends what is buffered, as the wrapped writer's http.Flusher does.
func (w *statusWriter) Flush() {
	w.implicitOK()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// implicitOK records the 200 net/http sends when the handler writes before
// it sends a status.
func (w *statusWriter) implicitOK() {
	if w.status == 0 {
		w.status = http.StatusOK
		w.settle(http.StatusOK)
	}
}

// Hijack hands the connection over, as the wrapped writer's http.Hijacker
// does; the status then counts as 101 Switching Protocols.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("stdhttp: %T cannot hijack: %w", w.ResponseWriter, http.ErrNotSupported)
	}
	c, rw, err := h.Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status returns the status sent, or 200 when the handler sent nothing (what
// net/http then sends).
func (w *statusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// finish settles the refund of a request whose handler sent no status (the
// headers go out with net/http's 200 once the middleware returns), then
// finishes the request.
func (w *statusWriter) finish() {
	status := w.Status()
	w.settle(status)
	w.pass.Finish(status)
}
