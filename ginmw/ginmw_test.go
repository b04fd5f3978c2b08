package ginmw_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
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
// that run a Group (the rule-driven ones run in module testing/conformance).
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

// The one-line form limits per client IP and refuses a malformed literal at
// once.
func TestPerIP(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(ginmw.PerIP("2/m"))
	r.GET("/", func(c *gin.Context) { c.Status(200) })
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes = append(codes, rec.Code)
	}
	assert.Equal(t, []int{200, 200, 429}, codes)
	assert.Panics(t, func() { ginmw.PerIP("2 per minute") })
}
