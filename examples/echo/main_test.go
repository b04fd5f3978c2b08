package main

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/examples/internal/servertest"
)

// start serves the Echo main serves on a loopback listener.
func start(t *testing.T, setup *flags.Setup) string {
	e, err := newEcho(setup)
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClassic(t *testing.T)   { servertest.Classic(t, start) }
func TestRulesMode(t *testing.T) { servertest.RulesMode(t, start) }
