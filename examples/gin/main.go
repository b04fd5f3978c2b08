// Command gin is a Gin server behind ratewarden's middleware:
//
//	go run ./examples/gin -limit 10/s -algorithm gcra
//	go run ./examples/gin -rules examples/rules.yaml
//	curl -i localhost:8080/
//
// It answers the routes of every example server (see examples/internal/flags
// and -h), through Gin's router (/api/items/:id with -rules): the limiter is
// a global middleware (r.Use), which Gin runs for unmatched requests too, so
// that the rules see every request. GET /metrics under -metrics is served
// through gin.WrapH. The flags are those of every example server.
//
// newLimit holds the lines an app copies: the limiter on the store, the key,
// and ginmw.New (or ginmw.Middleware on the rules); examples/internal/flags
// parses and checks the flags, makes the store and the rules, and runs the
// server.
package main

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

func main() {
	setup := flags.MustLoad("gin")
	defer setup.Close()

	r, err := newEngine(setup)
	setup.Check(err)
	srv := &http.Server{Handler: r}
	setup.Run(srv.Serve, srv.Shutdown)
}

// newLimit returns the Gin middleware that limits the requests as the flags
// say: with -rules, as the rules document says; otherwise with the algorithm
// and limit of -algorithm and -limit, per client as -key says.
func newLimit(setup *flags.Setup) (gin.HandlerFunc, error) {
	if setup.Rules != nil {
		return ginmw.Middleware(setup.Rules)
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
	return ginmw.New(lim, append(opts, httplimit.WithKey(key))...)
}

// newEngine returns the server's routes behind the limiter setup describes.
func newEngine(setup *flags.Setup) (*gin.Engine, error) {
	limit, err := newLimit(setup)
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(limit)
	for _, route := range setup.Config.Routes() {
		r.Handle(route.Method, route.ColonPattern(), func(c *gin.Context) { write(c, route.Answer(request{c})) })
	}
	if setup.Metrics != nil {
		r.GET(flags.MetricsPath, gin.WrapH(setup.Metrics))
	}
	// Gin answers a known path with another method as it answers an
	// unknown path (HandleMethodNotAllowed is off): 404.
	r.NoRoute(func(c *gin.Context) { write(c, flags.NotFound()) })
	return r, nil
}

// write writes the reply as plain text.
func write(c *gin.Context, reply flags.Reply) {
	for k, v := range reply.Header {
		c.Header(k, v)
	}
	c.String(reply.Status, "%s", reply.Body)
}

// request is a route's view of a Gin context.
type request struct{ c *gin.Context }

func (q request) Header(name string) string    { return q.c.GetHeader(name) }
func (q request) FormValue(name string) string { return q.c.PostForm(name) }
func (q request) PathValue(name string) string { return q.c.Param(name) }
func (q request) Query(name string) string     { return q.c.Query(name) }
