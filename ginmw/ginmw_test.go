package ginmw_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/adaptertest"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
)

func init() { gin.SetMode(gin.ReleaseMode) }

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := ginmw.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	r := gin.New()
	r.Use(func(c *gin.Context) { adaptertest.SetPeer(c.Request) }, mw)
	handle := func(c *gin.Context) {
		d, ok := ginmw.DecisionFrom(c)
		c.String(200, "%s", h(d, ok))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		r.GET(path, handle)
		r.HEAD(path, handle)
		r.POST(path, handle)
	}
	return adaptertest.HTTPServer(r), nil
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Disconnects: true})
}
