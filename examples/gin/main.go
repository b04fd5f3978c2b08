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
package main

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/ginmw"
)

func main() {
	setup := flags.MustLoad("gin")
	defer setup.Close()

	r, err := newEngine(setup)
	setup.Check(err)
	srv := &http.Server{Handler: r}
	setup.Run(srv.Serve, srv.Shutdown)
}

// newEngine returns the server's routes behind the limiter setup describes.
func newEngine(setup *flags.Setup) (*gin.Engine, error) {
	policy, err := setup.Handler()
	if err != nil {
		return nil, err
	}
	limit, err := ginmw.Middleware(policy)
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
func write(c *gin.Context, reply flags.Reply) { c.String(reply.Status, "%s", reply.Body) }

// request is a route's view of a Gin context.
type request struct{ c *gin.Context }

func (q request) Header(name string) string    { return q.c.GetHeader(name) }
func (q request) FormValue(name string) string { return q.c.PostForm(name) }
func (q request) PathValue(name string) string { return q.c.Param(name) }
