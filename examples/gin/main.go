// Command gin is a Gin server behind ratewarden's middleware:
//
//	go run ./examples/gin -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; POST /login answers 200 for the form field
// password=letmein and 401 for any other; GET /healthz, and GET /metrics
// under -metrics (served through gin.WrapH), are never limited. The flags
// are those of every example server (see examples/internal/flags and -h).
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

	limit, err := ginmw.New(setup.Limiter, setup.Options...)
	setup.Check(err)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(limit)
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	r.POST(flags.LoginPath, func(c *gin.Context) {
		status := flags.LoginStatus(c.PostForm("password"))
		c.String(status, http.StatusText(status)+"\n")
	})
	r.GET(flags.HealthPath, func(c *gin.Context) { c.String(http.StatusOK, "healthy\n") })
	if setup.Metrics != nil {
		r.GET(flags.MetricsPath, gin.WrapH(setup.Metrics))
	}
	srv := &http.Server{Handler: r}
	setup.Run(srv.Serve, srv.Shutdown)
}
