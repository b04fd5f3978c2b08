package echorules_test

import (
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// rulesApp is the conformance app around echomw.Middleware(rs), for
// adaptertest.RunRules (a copy of the adapter's own test app: its tests
// that need no rules stay in its module).
func rulesApp(_ *testing.T, rs httplimit.Handler, h adaptertest.Handler) (*adaptertest.Server, error) {
	mw, err := echomw.Middleware(rs)
	if err != nil {
		return nil, err
	}
	return appWith(mw, h), nil
}

// appWith is the conformance app: mw on every route, h answering.
func appWith(mw echo.MiddlewareFunc, h adaptertest.Handler) *adaptertest.Server {
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			adaptertest.SetPeer(c.Request())
			return next(c)
		}
	}, mw)
	handle := func(c echo.Context) error {
		d, ok := echomw.DecisionFrom(c)
		body := h(d, ok)
		status := adaptertest.Status(c.Request().Header.Get(adaptertest.StatusHeader))
		if status >= 500 {
			return echo.NewHTTPError(status) // the status Echo's error handler sends
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

func TestConformanceWithRules(t *testing.T) {
	adaptertest.RunRules(t, adaptertest.Adapter{Middleware: rulesApp}, func(doc []byte, st core.Store, clk core.Clock) (httplimit.Handler, error) {
		d, err := rules.Parse(doc, "rules.yaml")
		if err != nil {
			return nil, err
		}
		return rules.New(st, d, rules.WithClock(clk))
	})
}
