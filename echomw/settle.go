package echomw

import (
	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/httplimit"
)

// serveRefunding runs next under a refunding policy (httplimit.WithRefund):
// a Before hook on the response settles the refund for the status the
// handler sends, just before Echo writes the headers, so that they tell the
// quota after it; a response still unwritten when next returns (an error
// for the error handler to answer, or nothing written) is settled then, for
// its status, and its headers go out later with the refund's figures. The
// hook settles nothing once the middleware returned, or when the handler
// panicked: that request gets no refund.
func serveRefunding(c echo.Context, next echo.HandlerFunc, pass httplimit.Pass) error {
	resp := c.Response()
	live := true
	resp.Before(func() {
		if live {
			live = false
			pass.Settle(resp.Status, resp)
		}
	})
	defer func() { live = false }()
	err := next(c)
	code := status(c, err)
	if !resp.Committed {
		pass.Settle(code, resp)
	}
	pass.Finish(code)
	return err
}
