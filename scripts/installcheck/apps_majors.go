package main

// The programs of the framework majors that came after the brief's (Echo v5,
// Fiber v3) and of gRPC: each a module of its own, so a user of one of them
// downloads none of the others.

const echo5App = `package main

import (
	"log"

	"github.com/labstack/echo/v5"

	"github.com/ratewarden/ratewarden/echo5mw"
)

func main() {
	e := echo.New()
	e.Use(echo5mw.PerIP("100/m"))
	e.GET("/", func(c *echo.Context) error { return c.String(200, "hello\n") })
	log.Fatal(e.Start("127.0.0.1:8080"))
}
`

const fiber3App = `package main

import (
	"log"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/fiber3mw"
)

func main() {
	app := fiber.New()
	app.Use(fiber3mw.PerIP("100/m"))
	app.Get("/", func(c fiber.Ctx) error { return c.SendString("hello\n") })
	log.Fatal(app.Listen("127.0.0.1:8080"))
}
`

const grpcApp = `package main

import (
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ratewarden/ratewarden/grpcmw"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpcmw.PerIP("100/m").ServerOptions()...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	log.Fatal(srv.Serve(ln))
}
`
