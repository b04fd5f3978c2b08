module github.com/ratewarden/ratewarden/benchmarks

go 1.26.0

require (
	github.com/prometheus/client_golang v1.25.0
	github.com/ratewarden/ratewarden v0.1.0
	github.com/ratewarden/ratewarden/metrics/otel v0.1.0
	github.com/ratewarden/ratewarden/metrics/prometheus v0.1.0
	github.com/ratewarden/ratewarden/rules v0.1.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/gofiber/fiber/v3 v3.1.0 // indirect
	github.com/gofiber/schema v1.7.0 // indirect
	github.com/gofiber/utils/v2 v2.0.2 // indirect
	github.com/grpc-ecosystem/go-grpc-middleware/v2 v2.3.3 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/labstack/echo/v5 v5.4.4 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/tinylib/msgp v1.6.3 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/grpc v1.85.0 // indirect
)

require (
	github.com/andybalholm/brotli v1.2.0 // indirect
	github.com/bytedance/gopkg v0.1.3 // indirect
	github.com/bytedance/sonic v1.15.0 // indirect
	github.com/bytedance/sonic/loader v0.5.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/cloudwego/base64x v0.1.6 // indirect
	github.com/didip/tollbooth/v7 v7.0.2
	github.com/gabriel-vasile/mimetype v1.4.12 // indirect
	github.com/gin-contrib/sse v1.1.0 // indirect
	github.com/gin-gonic/gin v1.12.0
	github.com/go-chi/httprate v0.16.1
	github.com/go-chi/httprate-redis v0.5.0
	github.com/go-pkgz/expirable-cache/v3 v3.0.0 // indirect
	github.com/go-playground/locales v0.14.1 // indirect
	github.com/go-playground/universal-translator v0.18.1 // indirect
	github.com/go-playground/validator/v10 v10.30.1 // indirect
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/goccy/go-json v0.10.5 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/google/uuid v1.6.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/labstack/echo/v4 v4.16.0
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/leodido/go-urn v1.4.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/pelletier/go-toml/v2 v2.2.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/quic-go/quic-go v0.59.0 // indirect
	github.com/ratewarden/ratewarden/echo5mw v0.1.0
	github.com/ratewarden/ratewarden/echomw v0.1.0
	github.com/ratewarden/ratewarden/fiber3mw v0.1.0
	github.com/ratewarden/ratewarden/fibermw v0.1.0
	github.com/ratewarden/ratewarden/ginmw v0.1.0
	github.com/ratewarden/ratewarden/grpcmw v0.1.0
	github.com/ratewarden/ratewarden/store/redis v0.1.0
	github.com/ratewarden/ratewarden/store/rueidis v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/sethvargo/go-limiter v0.7.1
	github.com/stretchr/testify v1.12.1
	github.com/throttled/throttled/v2 v2.15.0
	github.com/twitchyliquid64/golang-asm v0.15.1 // indirect
	github.com/ugorji/go/codec v1.3.1 // indirect
	github.com/ulule/limiter/v3 v3.11.2
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.69.0
	github.com/valyala/fasttemplate v1.2.2 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.mongodb.org/mongo-driver/v2 v2.5.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/arch v0.22.0 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.16.0
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/ratewarden/ratewarden => ..

replace github.com/ratewarden/ratewarden/ginmw => ../ginmw

replace github.com/ratewarden/ratewarden/echomw => ../echomw

replace github.com/ratewarden/ratewarden/fibermw => ../fibermw

replace github.com/ratewarden/ratewarden/store/redis => ../store/redis

replace github.com/ratewarden/ratewarden/store/rueidis => ../store/rueidis

replace github.com/ratewarden/ratewarden/metrics/prometheus => ../metrics/prometheus

replace github.com/ratewarden/ratewarden/metrics/otel => ../metrics/otel

replace github.com/ratewarden/ratewarden/rules => ../rules

replace github.com/ratewarden/ratewarden/echo5mw => ../echo5mw

replace github.com/ratewarden/ratewarden/fiber3mw => ../fiber3mw

replace github.com/ratewarden/ratewarden/grpcmw => ../grpcmw
