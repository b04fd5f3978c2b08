// Command echo is an Echo server behind ratewarden's middleware:
//
//	go run ./examples/echo -limit 10/s -algorithm gcra
//	go run ./examples/echo -rules examples/rules.yaml
//	curl -i localhost:8080/
//
// It answers the routes of every example server (see examples/internal/flags
// and -h), through Echo's router (/api/items/:id with -rules): the limiter is
// a global middleware (e.Use), which Echo runs for unmatched requests too, so
// that the rules see every request. GET /metrics under -metrics is served
// through echo.WrapHandler. The flags are those of every example server.
//
// newLimit holds the lines an app copies: the limiter on the store, the key,
// and echomw.New (or echomw.Middleware on the rules); examples/internal/flags
// parses and checks the flags, makes the store and the rules, and runs the
// server.
package main

import (
	"errors"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/httplimit"
)

func main() {
	setup := flags.MustLoad("echo")
	defer setup.Close()

	e, err := newEcho(setup)
	setup.Check(err)
	setup.Run(func(ln net.Listener) error {
		e.Listener = ln
		return e.Start("")
	}, e.Shutdown)
}

// newLimit returns the Echo middleware that limits the requests as the
// flags say: with -rules, as the rules document says; otherwise with the
// algorithm and limit of -algorithm and -limit, per client as -key says.
func newLimit(setup *flags.Setup) (echo.MiddlewareFunc, error) {
	if setup.Rules != nil {
		return echomw.Middleware(setup.Rules)
	}
	cfg := setup.Config
	// setup.Store is memory.New(), or redisstore.New on a go-redis client of
	// redisstore.ParseURL's options (-store redis://...).
	// cfg.LimiterOptions(): -concurrency's core.WithInFlight(core.Concurrent(N)),
	// -block-for's core.WithBlockFor(DURATION), -lease's core.WithTokenLease.
	lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
	if err != nil {
		return nil, err
	}
	// keyfuncs.IP(), keyfuncs.Header(name) or jwtkey.Subject(...).
	key, err := cfg.KeyFunc()
	if err != nil {
		return nil, err
	}
	// The other flags: -tier, -fail, -dry-run, -count-only-failures,
	// -settle-header, the error log, the metrics, and /healthz never limited;
	// setup keeps the policy for -metrics' gauges and to give leased tokens
	// back at shutdown.
	lim, opts, err := setup.Policy(lim)
	if err != nil {
		return nil, err
	}
	return echomw.New(lim, append(opts, httplimit.WithKey(key))...)
}

// newEcho returns the server's routes behind the limiter setup describes.
func newEcho(setup *flags.Setup) (*echo.Echo, error) {
	limit, err := newLimit(setup)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(limit)
	for _, route := range setup.Config.Routes() {
		e.Add(route.Method, route.ColonPattern(), func(c echo.Context) error { return write(c, route.Answer(request{c})) })
	}
	if setup.Metrics != nil {
		e.GET(flags.MetricsPath, echo.WrapHandler(setup.Metrics))
	}
	e.HTTPErrorHandler = notFound(e.DefaultHTTPErrorHandler)
	return e, nil
}

// notFound answers Echo's 404 and 405 (a known path with another method) as
// every example server answers a request no route takes, and leaves other
// errors to next.
func notFound(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		var he *echo.HTTPError
		if errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed) && !c.Response().Committed {
			c.Response().Header().Del(echo.HeaderAllow)
			_ = write(c, flags.NotFound())
			return
		}
		next(err, c)
	}
}

// write writes the reply as plain text.
func write(c echo.Context, reply flags.Reply) error {
	for k, v := range reply.Header {
		c.Response().Header().Set(k, v)
	}
	return c.String(reply.Status, reply.Body)
}

// request is a route's view of an Echo context.
type request struct{ c echo.Context }

func (q request) Header(name string) string    { return q.c.Request().Header.Get(name) }
func (q request) FormValue(name string) string { return q.c.FormValue(name) }
func (q request) PathValue(name string) string { return q.c.Param(name) }
func (q request) Query(name string) string     { return q.c.QueryParam(name) }
