// Command echo5 is an Echo v5 server behind ratewarden's middleware:
//
//	go run ./examples/echo5 -limit 10/s -algorithm gcra
//	go run ./examples/echo5 -rules examples/rules.yaml
//	curl -i localhost:8080/
//
// It answers the routes of every example server (see examples/internal/flags
// and -h), through Echo's router (/api/items/:id with -rules): the limiter is
// a global middleware (e.Use), which Echo runs for unmatched requests too, so
// that the rules see every request. GET /metrics under -metrics is served
// through echo.WrapHandler. The flags are those of every example server.
package main

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func main() {
	setup := flags.MustLoad("echo5")
	defer setup.Close()

	e, err := newEcho(setup)
	setup.Check(err)
	srv := &http.Server{Handler: e}
	setup.Run(srv.Serve, srv.Shutdown)
}

// newEcho returns the server's routes behind the limiter setup describes.
func newEcho(setup *flags.Setup) (*echo.Echo, error) {
	policy, err := setup.Handler()
	if err != nil {
		return nil, err
	}
	limit, err := echo5mw.Middleware(policy)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.Use(limit)
	for _, route := range setup.Config.Routes() {
		e.Add(route.Method, route.ColonPattern(), func(c *echo.Context) error { return write(c, route.Answer(request{c})) })
	}
	if setup.Metrics != nil {
		e.GET(flags.MetricsPath, echo.WrapHandler(setup.Metrics))
	}
	e.HTTPErrorHandler = notFound(e.HTTPErrorHandler)
	return e, nil
}

// notFound answers Echo's 404 and 405 (a known path with another method) as
// every example server answers a request no route takes, and leaves other
// errors to next. Echo v5's router returns echo.ErrNotFound and
// echo.ErrMethodNotAllowed, which are not *echo.HTTPError: echo.StatusCode
// reads their code.
func notFound(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(c *echo.Context, err error) {
		code := echo.StatusCode(err)
		if resp, _ := echo.UnwrapResponse(c.Response()); (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) && resp != nil && !resp.Committed {
			c.Response().Header().Del(echo.HeaderAllow)
			_ = write(c, flags.NotFound())
			return
		}
		next(c, err)
	}
}

// write writes the reply as plain text.
func write(c *echo.Context, reply flags.Reply) error { return c.String(reply.Status, reply.Body) }

// request is a route's view of an Echo context.
type request struct{ c *echo.Context }

func (q request) Header(name string) string    { return q.c.Request().Header.Get(name) }
func (q request) FormValue(name string) string { return q.c.FormValue(name) }
func (q request) PathValue(name string) string { return q.c.Param(name) }
