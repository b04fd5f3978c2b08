// Command gin is a Gin server behind ratewarden's middleware:
//
//	go run ./examples/gin -limit 10/s -algorithm gcra
//	curl -i localhost:8080/
//
// GET / answers 200 "ok"; GET /healthz is never limited. The flags are those
// of every example server (see examples/internal/flags).
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
	r.GET(flags.HealthPath, func(c *gin.Context) { c.String(http.StatusOK, "healthy\n") })
	srv := &http.Server{Handler: r}
	setup.Run(srv.Serve, srv.Shutdown)
}
