package main

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/examples/internal/servertest"
)

// start serves the app main serves on a loopback listener.
func start(t *testing.T, setup *flags.Setup) string {
	app, err := newApp(setup)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln, listenConfig) }()
	t.Cleanup(func() {
		assert.NoError(t, app.Shutdown())
		assert.NoError(t, <-served)
	})
	return "http://" + ln.Addr().String()
}

func TestClassic(t *testing.T)   { servertest.Classic(t, start) }
func TestCalendar(t *testing.T)  { servertest.Calendar(t, start) }
func TestRulesMode(t *testing.T) { servertest.RulesMode(t, start) }
func TestSettle(t *testing.T)    { servertest.Settle(t, start) }
func TestInFlight(t *testing.T)  { servertest.InFlight(t, start) }
func TestPenalty(t *testing.T)   { servertest.Penalty(t, start) }

// In rules mode a path reaches a handler only as the route spells it: with
// a valid API key and the right password, so that whatever the rules make of
// it they let it through, a trailing slash or another case is Fiber's 404,
// never the handler. The limiter still sees each request first: the api
// policy's prefix takes /api/items/7/, and asks for its key.
func TestRoutesTakeOnlyTheirOwnSpelling(t *testing.T) {
	s := servertest.StartServer(t, start, "-rules", servertest.CopyRules(t, "rules.yaml"))
	password := []string{flags.PasswordHeader, flags.RulesPassword}
	key := []string{"X-API-Key", "k-spelling"}
	for _, tt := range []struct {
		method, path string
		headers      []string
		status       int
	}{
		{fiber.MethodPost, "/login", password, 200},
		{fiber.MethodPost, "/login/", password, 404},
		{fiber.MethodPost, "/login//", password, 404},
		{fiber.MethodPost, "/LOGIN", password, 404},
		{fiber.MethodGet, "/api/items/7", key, 200},
		{fiber.MethodGet, "/api/items/7/", key, 404},
		{fiber.MethodGet, "/API/items", key, 404},
		{fiber.MethodGet, "/Api/Items/7", key, 404},
		{fiber.MethodGet, "/healthz/", nil, 404},
		{fiber.MethodGet, "/api/items/7/", nil, 401},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			assert.Equal(t, tt.status, s.Do(t, tt.method, tt.path, tt.headers...).Status)
		})
	}
}
