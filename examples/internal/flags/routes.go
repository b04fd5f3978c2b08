package flags

import (
	"crypto/subtle"
	"net/http"
)

// The routes every example server answers, each through its framework's own
// router.
const (
	// HealthPath answers 200 and is never limited.
	HealthPath = "/healthz"
	// MetricsPath serves the Prometheus text format under -metrics, and is
	// never limited.
	MetricsPath = "/metrics"
	// LoginPath takes a POST with the form field "password": 200 for
	// DemoPassword, 401 otherwise. It is limited like any route; it is there
	// so that -count-only-failures has failures to count.
	LoginPath = "/login"
	// DemoPassword is the one password LoginPath accepts.
	DemoPassword = "letmein"
)

// LoginStatus is the status LoginPath answers for the password given: 200
// when it is DemoPassword, 401 otherwise. The comparison takes the same time
// whatever the password.
func LoginStatus(password string) int {
	if subtle.ConstantTimeCompare([]byte(password), []byte(DemoPassword)) == 1 {
		return http.StatusOK
	}
	return http.StatusUnauthorized
}

// skipped reports whether path is never limited: HealthPath, and MetricsPath
// when the metrics are served.
func (c *Config) skipped(path string) bool {
	return path == HealthPath || (c.Metrics && path == MetricsPath)
}
