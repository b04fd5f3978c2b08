package main

import (
	"net"
	"testing"

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
	go func() { served <- app.Listener(ln) }()
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
