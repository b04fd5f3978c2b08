package ginmw

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/httplimit"
)

// settleWriter is c.Writer for the handlers after a refunding policy
// (httplimit.WithRefund); no other request pays for it. Gin records the
// status a handler sets and sends the headers on the first Write,
// WriteString, Flush or WriteHeaderNow: the writer settles the refund for
// that status just before, so that the headers tell the quota after it. The
// other methods, and Unwrap for http.ResponseController, are Gin's.
type settleWriter struct {
	gin.ResponseWriter
	pass    httplimit.Pass
	settled bool
}

// settle settles the request's refund for the status Gin holds, once,
// while the headers are still unsent.
func (w *settleWriter) settle() {
	if w.settled {
		return
	}
	w.settled = true
	if !w.ResponseWriter.Written() {
		w.pass.Settle(w.ResponseWriter.Status(), w.ResponseWriter)
	}
}

// WriteHeaderNow settles the refund, then sends the headers.
func (w *settleWriter) WriteHeaderNow() {
	w.settle()
	w.ResponseWriter.WriteHeaderNow()
}

// Write settles the refund, then writes b (and the headers before it).
func (w *settleWriter) Write(b []byte) (int, error) {
	w.settle()
	return w.ResponseWriter.Write(b)
}

// WriteString settles the refund, then writes s (and the headers before it).
func (w *settleWriter) WriteString(s string) (int, error) {
	w.settle()
	return w.ResponseWriter.WriteString(s)
}

// Flush settles the refund, then sends the headers and what is buffered.
func (w *settleWriter) Flush() {
	w.settle()
	w.ResponseWriter.Flush()
}

// Unwrap returns Gin's writer, for http.ResponseController.
func (w *settleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveRefunding runs the handlers after the middleware with c.Writer
// wrapped to settle pass's refund as the headers go out, then settles it
// for a response whose headers Gin sends after the handlers (one that wrote
// nothing), and finishes the request. A handler that panics gets no refund:
// c.Writer is Gin's again for the recovery that answers it.
func serveRefunding(c *gin.Context, pass httplimit.Pass) {
	w := &settleWriter{ResponseWriter: c.Writer, pass: pass}
	c.Writer = w
	defer func() {
		w.settled = true
		if c.Writer == w {
			c.Writer = w.ResponseWriter
		}
	}()
	c.Next()
	w.settle()
	pass.Finish(w.ResponseWriter.Status())
}
