package flags

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratewarden/ratewarden/core"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/store/memory"
)

// newMetrics makes the registry -metrics serves: the policy's decisions,
// through the observer it returns, and, when st is a memory store, its keys
// and evictions. The handler it returns serves the registry in the Prometheus
// text format, for MetricsPath.
func newMetrics(st core.Store) (*prommetrics.Observer, http.Handler, error) {
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	if mem, ok := st.(*memory.Store); ok {
		if _, err := prommetrics.RegisterMemoryStore(reg, mem); err != nil {
			return nil, nil, err
		}
	}
	return obs, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
