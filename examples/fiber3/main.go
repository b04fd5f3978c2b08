// Command fiber3 is a Fiber v3 server behind ratewarden's middleware:
//
//	go run ./examples/fiber3 -limit 10/s -algorithm gcra
//	go run ./examples/fiber3 -rules examples/rules.yaml
//	curl -i localhost:8080/
//
// It answers the routes of every example server (see examples/internal/flags
// and -h), through Fiber's router (/api/items/:id with -rules): the limiter is
// the first handler of every path (app.Use), so that the rules see every
// request, and a last app.Use answers 404 to what no route takes. GET
// /metrics under -metrics is served through Fiber's adaptor middleware. The
// flags are those of every example server.
//
// The router is strict and case-sensitive (fiber.Config's StrictRouting and
// CaseSensitive, both off by default): a path reaches a route only as the
// route spells it, so POST /login/, POST /LOGIN, GET /API/items and GET
// /api/items/7/ are 404s, not handlers, whatever a rules document matches.
// One other spelling still reaches a route: Fiber routes on the path as sent,
// so a parameter takes a "." or ".." segment (GET /api/items/.. reaches the
// item route, id ".."), which the rules resolve as a dot segment (/api/).
// The limiter runs in app.Use, before Fiber has picked the route, so a policy
// on /api/items/{id} does not govern that request, while one on the prefix
// /api, as in examples/rules.yaml, does (fiber3mw on the route itself would
// tell the rules the route: see fiber3mw.New).
//
// newLimit holds the lines an app copies: the limiter on the store, the key,
// and fiber3mw.New (or fiber3mw.Middleware on the rules); examples/internal/flags
// parses and checks the flags, makes the store and the rules, and runs the
// server.
package main

import (
	"net"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/adaptor"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
)

func main() {
	setup := flags.MustLoad("fiber3")
	defer setup.Close()

	app, err := newApp(setup)
	setup.Check(err)
	setup.Run(func(ln net.Listener) error { return app.Listener(ln, listenConfig) }, app.ShutdownWithContext)
}

// listenConfig serves without Fiber's startup banner: the server reports on
// stderr like every example server.
var listenConfig = fiber.ListenConfig{DisableStartupMessage: true}

// newLimit returns the Fiber v3 middleware that limits the requests as the
// flags say: with -rules, as the rules document says; otherwise with the
// algorithm and limit of -algorithm and -limit, per client as -key says.
func newLimit(setup *flags.Setup) (fiber.Handler, error) {
	if setup.Rules != nil {
		return fiber3mw.Middleware(setup.Rules)
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
	return fiber3mw.New(lim, append(opts, httplimit.WithKey(key))...)
}

// newApp returns the server's routes behind the limiter setup describes.
func newApp(setup *flags.Setup) (*fiber.App, error) {
	limit, err := newLimit(setup)
	if err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{StrictRouting: true, CaseSensitive: true})
	app.Use(limit)
	for _, route := range setup.Config.Routes() {
		app.Add([]string{route.Method}, route.ColonPattern(), func(c fiber.Ctx) error { return write(c, route.Answer(request{c})) })
	}
	if setup.Metrics != nil {
		app.Get(flags.MetricsPath, adaptor.HTTPHandler(setup.Metrics))
	}
	// Registered last, it takes every request no route took, whatever its
	// method: 404, not Fiber's 405 for a known path.
	app.Use(func(c fiber.Ctx) error { return write(c, flags.NotFound()) })
	return app, nil
}

// write writes the reply as plain text.
func write(c fiber.Ctx, reply flags.Reply) error {
	for k, v := range reply.Header {
		c.Set(k, v)
	}
	return c.Status(reply.Status).SendString(reply.Body)
}

// request is a route's view of a Fiber context.
type request struct{ c fiber.Ctx }

func (q request) Header(name string) string    { return q.c.Get(name) }
func (q request) FormValue(name string) string { return q.c.FormValue(name) }
func (q request) PathValue(name string) string { return q.c.Params(name) }
func (q request) Query(name string) string     { return q.c.Query(name) }
