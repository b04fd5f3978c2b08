package main

// app is one tiny program a user would write, with the one-line API: it is put
// in a module of its own outside the repository, gets module at the release
// version and builds (it is never run).
type app struct {
	name   string // folder and binary name
	module string // what `go get` asks for at the release version
	source string // main.go
	// forbidden lists module paths (or path prefixes ending at a "/") that
	// must not be in the built binary: what this user must never download.
	forbidden []string
}

const root = "github.com/ratewarden/ratewarden"

// netHTTPForbidden are the modules a net/http program must never hold: those
// of the other frameworks and of gRPC, of JWTs, of Redis clients and of metrics SDKs.
var netHTTPForbidden = []string{
	"github.com/golang-jwt", "github.com/gin-gonic", "github.com/valyala/fasthttp", "github.com/redis/go-redis",
	"github.com/prometheus/", "go.opentelemetry.io/", "github.com/labstack/echo", "github.com/gofiber/fiber",
	"google.golang.org/grpc", "google.golang.org/genproto",
}

// grpcForbidden are the modules a gRPC program must never hold: the HTTP
// frameworks', and those of JWTs, Redis clients and metrics SDKs.
var grpcForbidden = []string{
	"github.com/golang-jwt", "github.com/gin-gonic", "github.com/valyala/fasthttp", "github.com/redis/go-redis",
	"github.com/prometheus/", "go.opentelemetry.io/", "github.com/labstack/echo", "github.com/gofiber/fiber",
}

// apps are the programs of the check: one per adapter (Echo v5, Fiber v3 and
// gRPC among them), one per Redis binding, one per metrics module, and one of
// the rules module.
var apps = []app{
	{name: "stdhttp", module: root, source: stdhttpApp, forbidden: netHTTPForbidden},
	{name: "rules", module: root + "/rules", source: rulesApp, forbidden: netHTTPForbidden},
	{name: "ginmw", module: root + "/ginmw", source: ginApp},
	{name: "echomw", module: root + "/echomw", source: echoApp},
	{name: "fibermw", module: root + "/fibermw", source: fiberApp},
	{name: "echo5mw", module: root + "/echo5mw", source: echo5App},
	{name: "fiber3mw", module: root + "/fiber3mw", source: fiber3App},
	{name: "grpcmw", module: root + "/grpcmw", source: grpcApp, forbidden: grpcForbidden},
	{name: "redis", module: root + "/store/redis", source: redisApp},
	{name: "rueidis", module: root + "/store/rueidis", source: rueidisApp},
	{name: "prometheus", module: root + "/metrics/prometheus", source: prometheusApp},
	{name: "otel", module: root + "/metrics/otel", source: otelApp},
}

const stdhttpApp = `package main

import (
	"log"
	"net/http"

	"github.com/ratewarden/ratewarden/stdhttp"
)

func main() {
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello\n"))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", stdhttp.PerIP("100/m")(hello)))
}
`

const rulesApp = `package main

import (
	"log"
	"net/http"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

func main() {
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	builtIn, err := rules.Parse([]byte("schema: 1\nversion: 1\npolicies:\n  - {name: all, limits: [100/m]}\n"), "built-in")
	if err != nil {
		log.Fatal(err)
	}
	set, err := rules.New(store, builtIn)
	if err != nil {
		log.Fatal(err)
	}
	watcher, err := rules.WatchFile(set, "rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	defer watcher.Close()
	limit, err := stdhttp.Middleware(set)
	if err != nil {
		log.Fatal(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello\n"))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", limit(hello)))
}
`

const ginApp = `package main

import (
	"log"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/ginmw"
)

func main() {
	r := gin.New()
	r.Use(ginmw.PerIP("100/m"))
	r.GET("/", func(c *gin.Context) { c.String(200, "hello\n") })
	log.Fatal(r.Run("127.0.0.1:8080"))
}
`

const echoApp = `package main

import (
	"log"

	"github.com/labstack/echo/v4"

	"github.com/ratewarden/ratewarden/echomw"
)

func main() {
	e := echo.New()
	e.Use(echomw.PerIP("100/m"))
	e.GET("/", func(c echo.Context) error { return c.String(200, "hello\n") })
	log.Fatal(e.Start("127.0.0.1:8080"))
}
`

const fiberApp = `package main

import (
	"log"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/fibermw"
)

func main() {
	app := fiber.New()
	app.Use(fibermw.PerIP("100/m"))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("hello\n") })
	log.Fatal(app.Listen("127.0.0.1:8080"))
}
`

const redisApp = `package main

import (
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

func main() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	st, err := redisstore.New(client)
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(lim.Algorithm())
}
`

const rueidisApp = `package main

import (
	"fmt"
	"log"

	"github.com/redis/rueidis"

	"github.com/ratewarden/ratewarden/core"
	rueidisstore "github.com/ratewarden/ratewarden/store/rueidis"
)

func main() {
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	st, err := rueidisstore.New(client)
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(lim.Algorithm())
}
`

const prometheusApp = `package main

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

func main() {
	st, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100))
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := prommetrics.RegisterMemoryStore(reg, st); err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello\n"))
	})))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}
`

const otelApp = `package main

import (
	"log"
	"net/http"

	"go.opentelemetry.io/otel"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

func main() {
	st, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100))
	if err != nil {
		log.Fatal(err)
	}
	obs, err := otelmetrics.New(otel.GetMeterProvider())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := otelmetrics.RegisterMemoryStore(otel.GetMeterProvider(), st); err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello\n"))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mw(hello)))
}
`
