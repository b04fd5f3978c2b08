package flags

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// -store redis:// and redis-cluster:// build a limiter that decides in a real
// Redis: two admitted, the third denied, /healthz never limited.
func TestBuildRedis(t *testing.T) {
	tests := []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"single node", func(t *testing.T) string { return "redis://" + redistest.Start(t).Addr() + "/0" }},
		{"cluster", func(t *testing.T) string { return "redis-cluster://" + strings.Join(redistest.StartCluster(t), ",") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A key of our own, so runs against a shared server do not collide.
			key := "header:X-Test-" + strings.ReplaceAll(t.Name(), "/", "-")
			c, err := Parse("ex", []string{"-store", tt.store(t), "-limit", "2/m", "-algorithm", "sliding-log", "-key", key, "-fail", "closed"}, &bytes.Buffer{})
			require.NoError(t, err)
			s, err := c.Build()
			require.NoError(t, err)
			defer func() { assert.NoError(t, s.Close()) }()
			p, err := httplimit.New(s.Limiter, s.Options...)
			require.NoError(t, err)
			req := headerRequest{name: strings.TrimPrefix(key, "header:"), value: randomValue(t)}
			// With -fail closed a failed store answers 503: 0 (passed) and 429
			// are the store's decisions.
			for i, want := range []int{0, 0, 429} {
				status, _ := handle(p, req)
				assert.Equal(t, want, status, "request %d", i+1)
			}
		})
	}
}

func randomValue(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", "-") + "-" + rand.Text()
}

type headerRequest struct{ name, value string }

func (h headerRequest) RemoteAddr() string { return "192.0.2.9:1234" }
func (h headerRequest) Header(name string) string {
	if strings.EqualFold(name, h.name) {
		return h.value
	}
	return ""
}
func (h headerRequest) HeaderValues(name string) []string {
	if v := h.Header(name); v != "" {
		return []string{v}
	}
	return nil
}
func (h headerRequest) Method() string           { return "GET" }
func (h headerRequest) Path() string             { return "/" }
func (h headerRequest) Route() string            { return "" }
func (h headerRequest) Context() context.Context { return context.Background() }

// With no Redis at the address, -fail open lets requests through and -fail
// closed answers 503; neither is a 429.
func TestRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	tests := []struct {
		fail   string
		status int
	}{
		{"open", 0},
		{"closed", 503},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			c, err := Parse("ex", []string{"-store", "redis://" + addr + "/0", "-fail", tt.fail}, &bytes.Buffer{})
			require.NoError(t, err)
			s, err := c.Build()
			require.NoError(t, err)
			defer s.Close()
			p, err := httplimit.New(s.Limiter, s.Options...)
			require.NoError(t, err)
			status, h := handle(p, headerRequest{})
			assert.Equal(t, tt.status, status)
			assert.Empty(t, h.Get("Ratelimit"), "the store did not decide")
		})
	}
}
