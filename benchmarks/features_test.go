package benchmarks

// What each production feature adds to ratewarden's net/http middleware on an
// allowed request: the observers of the metrics modules, a tier picked from a
// header, a dry run and a refund predicate, beside the default. Each row is
// measured as BenchmarkHTTPAdded measures (alternating blocks of bare and
// wrapped requests, the same request for both) and reported as added-ns/op;
// the Whole/ rows give ns/op and allocs/op of whole requests.
//
//	go test -run '^$' -bench '^BenchmarkHTTPFeatures' -benchmem -count 5 ./benchmarks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	otelmetrics "github.com/ratewarden/ratewarden/metrics/otel"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// featureRow is one configuration of the middleware, and the header the
// request carries (the tier's pick reads it).
type featureRow struct {
	name   string
	header []string
	opts   func(b *testing.B, lim *core.Limiter) []httplimit.Option
}

var featureRows = []featureRow{
	{"ratewarden", nil, func(*testing.B, *core.Limiter) []httplimit.Option { return nil }},
	{"ratewarden-prometheus", nil, func(b *testing.B, _ *core.Limiter) []httplimit.Option {
		obs, err := prommetrics.New(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		return []httplimit.Option{httplimit.WithObserver(obs)}
	}},
	{"ratewarden-otel", nil, func(b *testing.B, _ *core.Limiter) []httplimit.Option {
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = provider.Shutdown(b.Context()) })
		obs, err := otelmetrics.New(provider)
		if err != nil {
			b.Fatal(err)
		}
		return []httplimit.Option{httplimit.WithObserver(obs)}
	}},
	{"ratewarden-tiers", []string{"X-Plan", "paid"}, tierOptions},
	{"ratewarden-tiers-unknown", []string{"X-Plan", "gold"}, tierOptions},
	{"ratewarden-dry-run", nil, func(*testing.B, *core.Limiter) []httplimit.Option {
		return []httplimit.Option{httplimit.WithDryRun()}
	}},
	{"ratewarden-refund", nil, func(*testing.B, *core.Limiter) []httplimit.Option {
		return []httplimit.Option{httplimit.WithRefund(func(status int) bool { return status >= 500 })}
	}},
}

// tierOptions picks a "paid" tier by the X-Plan header; any other value gets
// the limiter itself.
func tierOptions(b *testing.B, lim *core.Limiter) []httplimit.Option {
	paid, err := lim.Tier("paid", core.PerSecond(999_999).WithBurst(1<<40))
	if err != nil {
		b.Fatal(err)
	}
	plan, err := keyfuncs.Header("X-Plan")
	if err != nil {
		b.Fatal(err)
	}
	return []httplimit.Option{httplimit.WithTiers(plan, paid)}
}

// serveRequest is serve with header pairs kv on the request.
func serveRequest(h http.Handler, kv []string) (func(), func() int) {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = benchPeer
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	w := httptest.NewRecorder()
	return func() {
			w = httptest.NewRecorder()
			h.ServeHTTP(w, req)
		}, func() int {
			return w.Code
		}
}

func BenchmarkHTTPFeatures(b *testing.B) {
	std := http.HandlerFunc(okHandler)
	wrap := func(b *testing.B, row featureRow) http.Handler {
		lim := benchLimiter(b)
		mw, err := stdhttp.New(lim, row.opts(b, lim)...)
		if err != nil {
			b.Fatal(err)
		}
		return mw(std)
	}
	for _, row := range featureRows {
		b.Run("Added/"+row.name, func(b *testing.B) {
			bare, _ := serveRequest(std, row.header)
			wrapped, code := serveRequest(wrap(b, row), row.header)
			added(b, bare, wrapped, 1, code)
		})
	}
	for _, row := range featureRows {
		b.Run("Whole/"+row.name, func(b *testing.B) {
			serve, code := serveRequest(wrap(b, row), row.header)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				serve()
			}
			b.StopTimer()
			if c := code(); c != 200 {
				b.Fatalf("status %d, want 200", c)
			}
		})
	}
}
