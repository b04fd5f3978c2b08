package echo5mw_test

import (
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := echo5mw.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	return appWith(mw, h), nil
}

// rulesApp is newApp around echo5mw.Middleware(rs), for the conformance cases
// that run a Group and for adaptertest.RunRules.
func rulesApp(_ *testing.T, rs httplimit.Handler, h adaptertest.Handler) (*adaptertest.Server, error) {
	mw, err := echo5mw.Middleware(rs)
	if err != nil {
		return nil, err
	}
	return appWith(mw, h), nil
}

// appWith is the conformance app: mw on every route, h answering.
func appWith(mw echo.MiddlewareFunc, h adaptertest.Handler) *adaptertest.Server {
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			adaptertest.SetPeer(c.Request())
			return next(c)
		}
	}, mw)
	handle := func(c *echo.Context) error {
		d, ok := echo5mw.DecisionFrom(c)
		body := h(d, ok)
		status := adaptertest.Status(c.Request().Header.Get(adaptertest.StatusHeader))
		adaptertest.SetCost(c.Request().Header.Get(adaptertest.CostHeader), c.Response().Header().Set)
		if status >= 500 {
			return echo.NewHTTPError(status, "") // the status Echo's error handler sends
		}
		return c.Blob(status, "text/plain; charset=utf-8", []byte(body))
	}
	for _, path := range []string{"/", "/health", "/users/:id"} {
		e.GET(path, handle)
		e.HEAD(path, handle)
		e.POST(path, handle)
	}
	return adaptertest.HTTPServer(e)
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Middleware: rulesApp, Disconnects: true, RenderJSON: renderJSON})
}

// renderJSON renders with Echo's c.JSON.
func renderJSON(_ httplimit.ResponseWriter, r keyfuncs.Request, status int, body any) {
	c, _ := echo5mw.Native(r)
	_ = c.JSON(status, body)
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
