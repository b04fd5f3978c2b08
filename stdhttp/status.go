package stdhttp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
)

// statusWriter records the status a handler sends, for a policy that refunds
// after the handler (httplimit.WithRefund); no other request pays for it. It
// passes Flush and Hijack through (so streaming handlers and WebSocket
// upgrades work as before) and Unwrap gives the writer it wraps, for
// http.ResponseController and its other methods.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first final status and sends it.
func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write sends b, with status 200 when no status was sent before.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is buffered, as the wrapped writer's http.Flusher does.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
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
