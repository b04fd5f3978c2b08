package flags

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

const secret32 = "0123456789abcdef0123456789abcdef"

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c *Config)
	}{
		{"defaults", nil, func(t *testing.T, c *Config) {
			assert.Equal(t, ":8080", c.Addr)
			assert.Equal(t, core.PerSecond(10), c.Limit)
			assert.Equal(t, core.GCRA, c.Algorithm)
			assert.Equal(t, "ip", c.Key)
			assert.Equal(t, Memory, c.Store)
			assert.False(t, c.FailClosed)
		}},
		{"limit and burst", []string{"-limit", "100/m", "-burst", "20", "-algorithm", "token-bucket"}, func(t *testing.T, c *Config) {
			assert.Equal(t, core.PerMinute(100).WithBurst(20), c.Limit)
			assert.Equal(t, core.TokenBucket, c.Algorithm)
		}},
		{"every algorithm name", []string{"-algorithm", "sliding-window"}, func(t *testing.T, c *Config) {
			assert.Equal(t, core.SlidingWindow, c.Algorithm)
		}},
		{"header key", []string{"-key", "header:X-API-Key"}, func(t *testing.T, c *Config) {
			assert.Equal(t, "header:X-API-Key", c.Key)
		}},
		{"jwt key", []string{"-key", "jwt", "-jwt-secret", secret32}, func(t *testing.T, c *Config) {
			assert.Equal(t, "jwt", c.Key)
		}},
		{"trusted proxies", []string{"-trusted-proxies", "10.0.0.0/8, 192.168.1.1"}, func(t *testing.T, c *Config) {
			assert.Equal(t, []string{"10.0.0.0/8", "192.168.1.1"}, c.TrustedProxies)
		}},
		{"redis", []string{"-store", "redis://127.0.0.1:6379/3"}, func(t *testing.T, c *Config) {
			assert.Equal(t, Redis, c.Store)
			assert.Equal(t, []string{"127.0.0.1:6379"}, c.RedisAddrs)
			assert.Equal(t, 3, c.RedisDB)
		}},
		{"redis without db", []string{"-store", "redis://localhost:6380"}, func(t *testing.T, c *Config) {
			assert.Equal(t, 0, c.RedisDB)
		}},
		{"redis cluster", []string{"-store", "redis-cluster://127.0.0.1:7000,127.0.0.1:7001"}, func(t *testing.T, c *Config) {
			assert.Equal(t, RedisCluster, c.Store)
			assert.Equal(t, []string{"127.0.0.1:7000", "127.0.0.1:7001"}, c.RedisAddrs)
		}},
		{"fail closed", []string{"-fail", "closed", "-addr", "127.0.0.1:0"}, func(t *testing.T, c *Config) {
			assert.True(t, c.FailClosed)
			assert.Equal(t, "127.0.0.1:0", c.Addr)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			c, err := Parse("ex", tt.args, &stderr)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

// Every invalid value gets exit status 2 and a message naming the flag.
func TestLoadBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "-nope"},
		{"stray argument", []string{"serve"}, `unexpected argument "serve"`},
		{"addr without port", []string{"-addr", "localhost"}, "-addr"},
		{"addr bad port", []string{"-addr", ":http"}, "-addr"},
		{"addr port too large", []string{"-addr", ":70000"}, "-addr"},
		{"limit garbage", []string{"-limit", "fast"}, "-limit"},
		{"limit zero", []string{"-limit", "0/s"}, "-limit"},
		{"limit no period", []string{"-limit", "10"}, "-limit"},
		{"burst negative", []string{"-burst", "-1"}, "-burst must not be negative"},
		{"burst not a number", []string{"-burst", "ten"}, "-burst"},
		{"burst on a window algorithm", []string{"-algorithm", "fixed-window", "-burst", "20"}, "takes no burst"},
		{"algorithm unknown", []string{"-algorithm", "bucket"}, "-algorithm"},
		{"key unknown", []string{"-key", "cookie"}, `-key "cookie"`},
		{"key header without name", []string{"-key", "header:"}, "-key"},
		{"key header bad name", []string{"-key", "header:X API"}, "not a header field name"},
		{"jwt without secret", []string{"-key", "jwt"}, "needs -jwt-secret"},
		{"jwt secret too short", []string{"-key", "jwt", "-jwt-secret", "short"}, "-key jwt"},
		{"jwt secret without jwt", []string{"-jwt-secret", secret32}, "only used with -key jwt"},
		{"trusted proxies bad CIDR", []string{"-trusted-proxies", "10.0.0.0/99"}, "-key ip"},
		{"trusted proxies with header key", []string{"-key", "header:X-API-Key", "-trusted-proxies", "10.0.0.0/8"}, "only used with -key ip"},
		{"store unknown", []string{"-store", "etcd"}, "unknown store"},
		{"store unknown scheme", []string{"-store", "memcached://127.0.0.1:11211"}, "unknown store"},
		{"redis no port", []string{"-store", "redis://127.0.0.1"}, "not host:port"},
		{"redis bad db", []string{"-store", "redis://127.0.0.1:6379/x"}, "database"},
		{"redis password in the query", []string{"-store", "redis://127.0.0.1:6379?password=pw"}, "the option password is refused"},
		{"redis cluster bad address", []string{"-store", "redis-cluster://127.0.0.1:7000,nope"}, "not host:port"},
		{"redis cluster port zero", []string{"-store", "redis-cluster://127.0.0.1:0"}, "port"},
		{"fail unknown", []string{"-fail", "maybe"}, `-fail "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.Contains(t, stderr.String(), "run ex -h for the flags")
		})
	}
}

func TestLoadHelp(t *testing.T) {
	var stderr bytes.Buffer
	s, code := Load("ex", []string{"-h"}, &stderr)
	assert.Nil(t, s)
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr.String(), "-algorithm")
}

// MustLoad really exits with status 2: run this test binary again as a
// program with bad flags.
func TestMustLoadExitStatus(t *testing.T) {
	if args := os.Getenv("FLAGS_TEST_ARGS"); args != "" {
		os.Args = append([]string{"ex"}, strings.Fields(args)...)
		MustLoad("ex")
		os.Exit(0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMustLoadExitStatus$")
	cmd.Env = append(os.Environ(), "FLAGS_TEST_ARGS=-limit 10/fortnight")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "want an exit error, got %v", err)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, stderr.String(), "ex: -limit")
}

func TestBuildMemory(t *testing.T) {
	c, err := Parse("ex", []string{"-limit", "2/m", "-algorithm", "fixed-window"}, &bytes.Buffer{})
	require.NoError(t, err)
	s, err := c.Build()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Close()) }()
	assert.Equal(t, core.FixedWindow, s.Limiter.Algorithm())
	assert.Len(t, s.Options, 3)
	p, err := httplimit.New(s.Limiter, s.Options...)
	require.NoError(t, err)
	for i, want := range []int{0, 0, 429} {
		status, _ := handle(p, fakeRequest{path: "/"})
		assert.Equal(t, want, status, "request %d", i+1)
	}
	status, h := handle(p, fakeRequest{path: HealthPath})
	assert.Zero(t, status, "/healthz is never limited")
	assert.Empty(t, h.Get("Ratelimit"), "nor decided")
}

// handle runs p on r as an adapter would: the status it answered with, 0 when
// the request goes on to the next handler, and the headers it set.
func handle(p *httplimit.Policy, r keyfuncs.Request) (int, http.Header) {
	w := httptest.NewRecorder()
	if _, next := p.Handle(context.Background(), r, w); next {
		return 0, w.Header()
	}
	return w.Code, w.Header()
}

func TestListenReportsAddress(t *testing.T) {
	c, err := Parse("ex", []string{"-addr", "127.0.0.1:0"}, &bytes.Buffer{})
	require.NoError(t, err)
	s, err := c.Build()
	require.NoError(t, err)
	defer s.Close()
	var out bytes.Buffer
	ln, err := s.Listen(&out)
	require.NoError(t, err)
	defer ln.Close()
	assert.Contains(t, out.String(), "listening on http://"+ln.Addr().String())
	assert.Contains(t, out.String(), "gcra with 10/s on memory")
}

type fakeRequest struct{ path string }

func (f fakeRequest) RemoteAddr() string           { return "192.0.2.7:4321" }
func (f fakeRequest) Header(string) string         { return "" }
func (f fakeRequest) HeaderValues(string) []string { return nil }
func (f fakeRequest) Method() string               { return "GET" }
func (f fakeRequest) Path() string                 { return f.path }
func (f fakeRequest) Route() string                { return "" }
func (f fakeRequest) Context() context.Context     { return context.Background() }
