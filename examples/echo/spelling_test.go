package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/examples/internal/servertest"
)

// Another spelling of a path (a trailing slash, "//", ".", "..", escapes,
// case) never reaches a handler without the policies its plain spelling
// gets, with examples/rules.yaml: Echo v4's router either refuses it (404) or
// takes it to the same handler, and then the rules, which match the
// normalised path, hold it as they hold the plain one. Echo gives a route's
// last parameter the rest of the path, slashes and all: GET /api/items/1/
// is item "1/", /api/items/1/2 item "1/2", and /api/items/%2E%2E/%2E%2E/x
// item "%2E%2E/%2E%2E/x", a path whose normal form ("/x") leaves /api: the
// rules match it with its dot segments kept too, and the API's prefix
// governs it.
func TestSpellings(t *testing.T) {
	s := servertest.StartServer(t, start, "-rules", servertest.CopyRules(t, "rules.yaml"))
	tests := []struct {
		method, path, plain string
		status              int
	}{
		{http.MethodGet, "/api/items/1/", "/api/items/1", 200},
		{http.MethodGet, "/api/items/1/..", "/api/items/1", 200},
		{http.MethodGet, "/api/items//1", "/api/items/1", 200},
		{http.MethodGet, "/api/items/1%2F2", "/api/items/1", 200},
		{http.MethodDelete, "/api/items/1/", "/api/items/1", 200},
		{http.MethodGet, "//api/items/1", "/api/items/1", 404},
		{http.MethodGet, "/API/items/1", "/api/items/1", 404},
		{http.MethodGet, "/api/items/", "/api/items", 404},
		{http.MethodPost, "/login/", "/login", 404},
		{http.MethodPost, "//login", "/login", 404},
		{http.MethodPost, "/LOGIN", "/login", 404},
		{http.MethodPost, "/%6cogin", "/login", 404},
		{http.MethodGet, "/healthz/", "/healthz", 404},
		{http.MethodGet, "/api/items/1/2", "/api/items/1", 200},
		{http.MethodGet, "/api/items/1/x/", "/api/items/1", 200},
		{http.MethodGet, "/api/items/%2E%2E", "/api/items/1", 200},
		{http.MethodGet, "/api/items/.", "/api/items/1", 200},
		{http.MethodGet, "/api/items/%2E%2E/%2E%2E/x", "/api/items/1", 200},
		{http.MethodDelete, "/api/items/1/%2E%2E/%2E%2E/%2E%2E", "/api/items/1", 200},
	}
	headers := []string{"X-API-Key", "k-spelling", "X-Password", "right"}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			plain := s.Do(t, tt.method, tt.plain, headers...)
			got := s.Do(t, tt.method, tt.path, headers...)
			assert.Equal(t, tt.status, got.Status)
			if got.Status != http.StatusNotFound {
				assert.Equal(t, plain.Header.Get("RateLimit-Policy"), got.Header.Get("RateLimit-Policy"), "a handler reached by another spelling is governed as the plain one")
				assert.NotEmpty(t, got.Header.Get("RateLimit-Policy"))
			}
		})
	}
}
