package ginmw_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

func init() { gin.SetMode(gin.ReleaseMode) }

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := ginmw.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	return appWith(mw, h), nil
}

// rulesApp is newApp around ginmw.Middleware(rs), for the conformance cases
// that run a Group and for adaptertest.RunRules.
func rulesApp(_ *testing.T, rs httplimit.Handler, h adaptertest.Handler) (*adaptertest.Server, error) {
	mw, err := ginmw.Middleware(rs)
	if err != nil {
		return nil, err
	}
	return appWith(mw, h), nil
}

// appWith is the conformance app: mw on every route, h answering.
func appWith(mw gin.HandlerFunc, h adaptertest.Handler) *adaptertest.Server {
	r := gin.New()
	r.Use(func(c *gin.Context) { adaptertest.SetPeer(c.Request) }, mw)
	handle := func(c *gin.Context) {
		d, ok := ginmw.DecisionFrom(c)
		adaptertest.SetCost(c.GetHeader(adaptertest.CostHeader), c.Header)
		c.String(adaptertest.Status(c.GetHeader(adaptertest.StatusHeader)), "%s", h(d, ok))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		r.GET(path, handle)
		r.HEAD(path, handle)
		r.POST(path, handle)
	}
	return adaptertest.HTTPServer(r)
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Middleware: rulesApp, Disconnects: true, RenderJSON: renderJSON})
}

// renderJSON renders with Gin's c.JSON.
func renderJSON(_ httplimit.ResponseWriter, r keyfuncs.Request, status int, body any) {
	c, _ := ginmw.Native(r)
	c.JSON(status, body)
}

func TestConformanceWithRules(t *testing.T) {
	adaptertest.RunRules(t, adaptertest.Adapter{Middleware: rulesApp}, func(doc []byte, st core.Store, clk core.Clock) (httplimit.Handler, error) {
		d, err := rules.Parse(doc, "rules.yaml")
		if err != nil {
			return nil, err
		}
		return rules.New(st, d, rules.WithClock(clk))
	})
}
