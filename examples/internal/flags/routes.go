package flags

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// The paths and passwords of the routes every example server answers, each
// through its framework's own router.
const (
	// HealthPath answers 200 and is never limited: by the server without
	// -rules, by the rules document (examples/rules.yaml exempts it) with.
	HealthPath = "/healthz"
	// MetricsPath serves the Prometheus text format under -metrics, and is
	// never limited.
	MetricsPath = "/metrics"
	// LoginPath takes a POST: without -rules, 200 for the form field
	// "password" DemoPassword; with -rules, 200 for the header PasswordHeader
	// RulesPassword; 401 otherwise. It is there so that -count-only-failures
	// and the rules' "count: failures" have failures to count.
	LoginPath = "/login"
	// DemoPassword is the one password LoginPath accepts without -rules.
	DemoPassword = "letmein"
	// PasswordHeader carries the password LoginPath checks with -rules.
	PasswordHeader = "X-Password"
	// RulesPassword is the one password LoginPath accepts with -rules.
	RulesPassword = "right"
	// ItemsPath and ItemPath are the API of the server with -rules: GET and
	// POST on the items, GET and DELETE on one item, whose id is the route
	// parameter "id".
	ItemsPath = "/api/items"
	ItemPath  = "/api/items/{id}"
)

// LoginStatus is the status LoginPath answers without -rules for the
// password given: 200 when it is DemoPassword, 401 otherwise. The comparison
// takes the same time whatever the password.
func LoginStatus(password string) int {
	return passwordStatus(password, DemoPassword)
}

// passwordStatus is 200 when password is want, 401 otherwise, comparing in
// constant time.
func passwordStatus(password, want string) int {
	if subtle.ConstantTimeCompare([]byte(password), []byte(want)) == 1 {
		return http.StatusOK
	}
	return http.StatusUnauthorized
}

// skipped reports whether path is never limited: HealthPath, and MetricsPath
// when the metrics are served.
func (c *Config) skipped(path string) bool {
	return path == HealthPath || (c.Metrics && path == MetricsPath)
}

// RouteRequest is what a route reads of its request: each server passes its
// framework's own request or context through it.
type RouteRequest interface {
	// Header returns the first value of the named header, "" when there is
	// none.
	Header(name string) string
	// FormValue returns the named field of a form body.
	FormValue(name string) string
	// PathValue returns the route parameter name ("id" of ItemPath).
	PathValue(name string) string
	// Query returns the first value of the URL's query parameter name, ""
	// when there is none.
	Query(name string) string
}

// Route is one route of an example server: a method, a path pattern, and
// what it answers.
type Route struct {
	Method string
	// Pattern is the path, with {name} for a parameter segment, as
	// net/http's ServeMux writes it (see MuxPattern and ColonPattern).
	Pattern string
	// Answer returns the reply to a request.
	Answer func(RouteRequest) Reply
}

// Reply is a route's answer: a status, a plain-text body, and headers to
// set before the status (nil for none).
type Reply struct {
	Status int
	Body   string
	Header map[string]string
}

// MuxPattern returns the route as a net/http ServeMux pattern: "GET /{$}"
// for the root alone, "POST /api/items".
func (r Route) MuxPattern() string {
	if r.Pattern == "/" {
		return r.Method + " /{$}"
	}
	return r.Method + " " + r.Pattern
}

// ColonPattern returns the route's path as Gin, Echo and Fiber write it:
// each {name} as :name ("/api/items/:id").
func (r Route) ColonPattern() string {
	segments := strings.Split(r.Pattern, "/")
	for i, s := range segments {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segments[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segments, "/")
}

// Routes returns the routes the server answers, MetricsPath aside: with
// -rules, those of a small API; without, those of one limited page. Anything
// else is NotFound.
func (c *Config) Routes() []Route {
	ok := func(RouteRequest) Reply { return Reply{Status: http.StatusOK, Body: "ok\n"} }
	healthy := func(RouteRequest) Reply { return Reply{Status: http.StatusOK, Body: "healthy\n"} }
	if c.RulesSource == NoRules {
		return []Route{
			{http.MethodGet, "/", ok},
			{http.MethodPost, LoginPath, func(r RouteRequest) Reply {
				return statusText(LoginStatus(r.FormValue("password")))
			}},
			{http.MethodGet, HealthPath, healthy},
			tokensRoute(),
			slowRoute(),
		}
	}
	return []Route{
		{http.MethodGet, "/", ok},
		{http.MethodGet, ItemsPath, func(RouteRequest) Reply { return Reply{Status: http.StatusOK, Body: "items 1, 2, 3\n"} }},
		{http.MethodPost, ItemsPath, func(RouteRequest) Reply { return Reply{Status: http.StatusCreated, Body: "item 4 created\n"} }},
		{http.MethodGet, ItemPath, func(r RouteRequest) Reply {
			return Reply{Status: http.StatusOK, Body: "item " + r.PathValue("id") + "\n"}
		}},
		{http.MethodDelete, ItemPath, func(r RouteRequest) Reply {
			return Reply{Status: http.StatusOK, Body: "item " + r.PathValue("id") + " deleted\n"}
		}},
		{http.MethodPost, LoginPath, func(r RouteRequest) Reply {
			return statusText(passwordStatus(r.Header(PasswordHeader), RulesPassword))
		}},
		{http.MethodGet, HealthPath, healthy},
		tokensRoute(),
		slowRoute(),
	}
}

// NotFound is the answer to a request no route takes, whatever its method,
// in every server: 404.
func NotFound() Reply {
	return statusText(http.StatusNotFound)
}

// statusText returns the reply of status with its text as the body.
func statusText(status int) Reply {
	return Reply{Status: status, Body: http.StatusText(status) + "\n"}
}
