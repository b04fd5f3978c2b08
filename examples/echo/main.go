// Command echo is an Echo server behind ratewarden's middleware:
//
//	go run ./examples/echo -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; POST /login answers 200 for the form field
// password=letmein and 401 for any other; GET /healthz, and GET /metrics
// under -metrics (served through echo.WrapHandler), are never limited. The
// flags are those of every example server (see examples/internal/flags and
// -h).
package main

import (
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/echomw"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func main() {
	setup := flags.MustLoad("echo")
	defer setup.Close()

	limit, err := echomw.New(setup.Limiter, setup.Options...)
	setup.Check(err)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(limit)
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") })
	e.POST(flags.LoginPath, func(c echo.Context) error {
		status := flags.LoginStatus(c.FormValue("password"))
		return c.String(status, http.StatusText(status)+"\n")
	})
	e.GET(flags.HealthPath, func(c echo.Context) error { return c.String(http.StatusOK, "healthy\n") })
	if setup.Metrics != nil {
		e.GET(flags.MetricsPath, echo.WrapHandler(setup.Metrics))
	}
	setup.Run(func(ln net.Listener) error {
		e.Listener = ln
		return e.Start("")
	}, e.Shutdown)
}
