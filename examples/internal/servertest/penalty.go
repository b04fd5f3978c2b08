package servertest

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/rules"
)

// Penalty starts a server with -limit 2/m -block-for 15m, its limiter on a
// manual clock, and checks what a client sees: the denial that starts the
// block and every request during it get 429 with the block's end in
// Retry-After and RateLimit's t, even once the limit alone would admit the
// client again; other clients are not blocked; after the block the client
// is admitted again.
func Penalty(t *testing.T, start Start) {
	clk := core.NewManualClock(time.Now())
	s := startServerOn(t, start, clk, "-limit", "2/m", "-block-for", "15m", "-key", "header:X-API-Key")
	for i := range 2 {
		resp := s.Do(t, http.MethodGet, "/", "X-API-Key", "alice")
		require.Equal(t, http.StatusOK, resp.Status, "request %d", i)
	}
	refused := func(t *testing.T, key string, left int) {
		t.Helper()
		resp := s.Do(t, http.MethodGet, "/", "X-API-Key", key)
		require.Equal(t, http.StatusTooManyRequests, resp.Status)
		assert.Equal(t, strconv.Itoa(left), resp.Header.Get("Retry-After"))
		assert.Equal(t, `"default";r=0;t=`+strconv.Itoa(left), resp.Header.Get("RateLimit"))
	}
	refused(t, "alice", 900)
	clk.Advance(5 * time.Minute) // 2/m alone would admit alice again
	refused(t, "alice", 600)
	resp := s.Do(t, http.MethodGet, "/", "X-API-Key", "bob")
	assert.Equal(t, http.StatusOK, resp.Status, "another client is not blocked")
	clk.Advance(10 * time.Minute)
	resp = s.Do(t, http.MethodGet, "/", "X-API-Key", "alice")
	assert.Equal(t, http.StatusOK, resp.Status, "the block has ended")
}

// startServerOn is StartServer with the server's limiter on clk (the
// Config's Clock, which main's newLimit passes on with LimiterOptions).
func startServerOn(t *testing.T, start Start, clk core.Clock, args ...string) *Server {
	t.Helper()
	c, err := flags.Parse("ex", args, io.Discard)
	require.NoError(t, err)
	c.Clock = clk
	s := &Server{Log: &LockedBuffer{}, Reloads: make(chan rules.Reload, 16), client: &http.Client{Timeout: 10 * time.Second}}
	c.ErrorLog = s.Log
	s.Setup, err = c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Setup.Close()) })
	s.URL = start(t, s.Setup)
	return s
}
