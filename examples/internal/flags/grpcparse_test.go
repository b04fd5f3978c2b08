package flags

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/grpcmw"
)

func TestParseGRPC(t *testing.T) {
	c, err := ParseGRPC("grpc", nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, DefaultGRPCAddr, c.Addr)
	assert.Empty(t, c.MetricsAddr)
	assert.False(t, c.Metrics)

	c, err = ParseGRPC("grpc", []string{"-metrics-addr", "127.0.0.1:0", "-key", "header:x-api-key", "-limit", "5/m", "-count-only-failures"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", c.MetricsAddr)
	assert.True(t, c.Metrics, "-metrics-addr turns the metrics on")
	assert.Equal(t, "header:x-api-key", c.Key)
	assert.True(t, c.CountOnlyFailures)

	_, err = ParseGRPC("grpc", []string{"-metrics"}, io.Discard)
	assert.ErrorIs(t, err, errUsage, "-metrics is the HTTP servers' flag")
	_, err = ParseGRPC("grpc", []string{"-metrics-addr", ""}, io.Discard)
	assert.ErrorIs(t, err, errUsage)
}

// flagHelp splits the flags' part of a -h text into each flag's help, by
// name.
func flagHelp(t *testing.T, usage string) map[string]string {
	t.Helper()
	_, list, ok := strings.Cut(usage, "\nFlags:\n")
	require.True(t, ok, "a Flags: section")
	help := map[string]string{}
	name := regexp.MustCompile(`^  -([a-z-]+)`)
	var current string
	for _, line := range strings.SplitAfter(list, "\n") {
		if m := name.FindStringSubmatch(line); m != nil {
			current = m[1]
		}
		help[current] += line
	}
	return help
}

// The gRPC server's -h documents every flag it shares with the HTTP servers
// in the same words, but for -fail and -count-only-failures (said in gRPC's
// terms) and -addr's default; -metrics is replaced by -metrics-addr.
func TestGRPCHelpSharesTheHTTPWording(t *testing.T) {
	var httpUsage, grpcUsage bytes.Buffer
	_, err := Parse("ex", []string{"-h"}, &httpUsage)
	require.True(t, errors.Is(err, flag.ErrHelp))
	_, err = ParseGRPC("ex", []string{"-h"}, &grpcUsage)
	require.True(t, errors.Is(err, flag.ErrHelp))
	httpHelp, grpcHelp := flagHelp(t, httpUsage.String()), flagHelp(t, grpcUsage.String())

	for name, help := range httpHelp {
		switch name {
		case "metrics":
			assert.NotContains(t, grpcHelp, name)
		case "addr":
			assert.Equal(t, strings.Replace(help, `":8080"`, `"`+DefaultGRPCAddr+`"`, 1), grpcHelp[name])
		case "fail", "count-only-failures":
			assert.NotEqual(t, help, grpcHelp[name])
			assert.NotContains(t, grpcHelp[name], "503")
			assert.NotContains(t, grpcHelp[name], LoginPath)
		default:
			assert.Equal(t, help, grpcHelp[name], "-%s", name)
		}
	}
	assert.Contains(t, grpcHelp["metrics-addr"], "-metrics-addr HOST:PORT")
	assert.Contains(t, grpcUsage.String(), "grpc.testing.TestService")
	assert.Len(t, grpcHelp, len(httpHelp), "the flags but -metrics, and -metrics-addr")
}

// The start line names the metrics' address, not the HTTP servers' route.
func TestGRPCSetupListen(t *testing.T) {
	c, err := ParseGRPC("grpc", []string{"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-limit", "2/m"}, io.Discard)
	require.NoError(t, err)
	s, err := c.Build()
	require.NoError(t, err)
	defer s.Close()
	var out bytes.Buffer
	grpcLn, metricsLn, err := s.Listen(&out)
	require.NoError(t, err)
	defer grpcLn.Close()
	defer metricsLn.Close()
	assert.Equal(t, "gcra with 2/m on memory, key ip, failing open; listening on grpc://"+grpcLn.Addr().String()+
		", metrics on http://"+metricsLn.Addr().String()+"/metrics\n", out.String())
	assert.Contains(t, s.Setup.String(), "metrics on /metrics", "the Setup itself is unchanged")

	// A metrics address that cannot be had closes the gRPC listener too.
	s.MetricsAddr = metricsLn.Addr().String()
	_, _, err = s.Listen(io.Discard)
	assert.ErrorContains(t, err, "-metrics-addr")
}

// Without -rules the policy never limits the health service nor reflection;
// with them, the document decides.
func TestGRPCHandlerSkipsHealthAndReflection(t *testing.T) {
	c, err := ParseGRPC("grpc", []string{"-limit", "1/m"}, io.Discard)
	require.NoError(t, err)
	s, err := c.Build()
	require.NoError(t, err)
	defer s.Close()
	h, err := s.Handler()
	require.NoError(t, err)
	assert.NotNil(t, h)
	for method, want := range map[string]bool{
		"/grpc.health.v1.Health/Check":                                   true,
		"/grpc.health.v1.Health/Watch":                                   true,
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
		"/grpc.testing.TestService/EmptyCall":                            false,
		"/grpc.health.v1.HealthCheck/Check":                              false, // the service, not a prefix of its name
		"/grpc.reflection.v1.ServerReflectionX/Info":                     false,
	} {
		assert.Equal(t, want, IsUnlimitedCall(grpcmw.View(context.Background(), method)), method)
	}
}
