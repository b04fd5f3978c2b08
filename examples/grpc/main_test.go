package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

const secret32 = "0123456789abcdef0123456789abcdef"

// A limit of 2 a minute per client IP: two calls pass with the rate-limit
// fields, the third is ResourceExhausted with RetryInfo, QuotaFailure and
// retry-after, whatever the method, streams included; the health service
// is never limited.
func TestClassic(t *testing.T) {
	s := startServer(t, "-limit", "2/m")
	assert.Regexp(t, `^gcra with 2/m on memory, key ip, failing open; listening on grpc://127\.0\.0\.1:\d+\n$`, s.line)

	r := s.empty(t)
	require.NoError(t, r.err)
	assert.Equal(t, `"default";q=2;w=60`, r.field("ratelimit-policy"))
	assert.Equal(t, `"default";r=1;t=30`, r.field("ratelimit"))
	assert.Equal(t, "2", r.field("x-ratelimit-limit"))
	assert.Equal(t, "1", r.field("x-ratelimit-remaining"))
	assert.Empty(t, r.field("retry-after"), "an allowed call gets no retry-after")

	r = s.duplex(t)
	require.NoError(t, r.err, "a stream shares the budget")
	assert.Equal(t, "0", r.field("x-ratelimit-remaining"))

	for _, r := range []result{s.empty(t), s.unary(t, codes.OK), s.duplex(t)} {
		assertDenied(t, r, "default", time.Minute)
		assert.Equal(t, `"default";q=2;w=60`, r.field("ratelimit-policy"))
		assert.Regexp(t, `^"default";r=0;t=\d+$`, r.field("ratelimit"))
	}
	for range 5 {
		s.assertServing(t)
		s.assertReflection(t)
	}
}

// -dry-run: every call goes on, and the fields tell the truth.
func TestDryRun(t *testing.T) {
	s := startServer(t, "-limit", "2/m", "-dry-run")
	var r result
	for range 3 {
		r = s.empty(t)
		require.NoError(t, r.err)
	}
	assert.Regexp(t, `^"default";r=0;t=\d+$`, r.field("ratelimit"))
	assert.Equal(t, "0", r.field("x-ratelimit-remaining"))
	assert.Contains(t, s.line, "dry run (nothing denied)")
}

// -metrics-addr serves the decisions over plain HTTP, and nothing else; the
// health checks are not decisions.
func TestMetricsAddr(t *testing.T) {
	s := startServer(t, "-limit", "2/m", "-metrics-addr", "127.0.0.1:0")
	assert.Regexp(t, `^gcra with 2/m on memory, key ip, failing open; listening on grpc://127\.0\.0\.1:\d+, metrics on http://127\.0\.0\.1:\d+/metrics\n$`, s.line)
	require.NoError(t, s.empty(t).err)
	require.NoError(t, s.unary(t, codes.OK).err)
	assertDenied(t, s.empty(t), "default", time.Minute)
	s.assertServing(t)

	code, body := s.getMetrics(t, flags.MetricsPath)
	require.Equal(t, 200, code)
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="allowed",policy="default"} 2`+"\n")
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="denied",policy="default"} 1`+"\n")
	assert.Contains(t, body, "ratewarden_memory_store_keys 1\n")
	code, _ = s.getMetrics(t, "/other")
	assert.Equal(t, 404, code)
}

// -key header:x-api-key: each key has its own budget, read from the
// metadata entry; a call without it is Unauthenticated.
func TestHeaderKey(t *testing.T) {
	s := startServer(t, "-limit", "1/m", "-key", "header:x-api-key")
	require.NoError(t, s.empty(t, "x-api-key", "k1").err)
	assertDenied(t, s.empty(t, "x-api-key", "k1"), "default", time.Minute)
	require.NoError(t, s.empty(t, "x-api-key", "k2").err, "another key, its own budget")
	r := s.empty(t)
	assert.Equal(t, codes.Unauthenticated, r.code(), "no key: %v", r.err)
	s.assertServing(t)
}

// -key jwt with tiers: the plan claim of the verified bearer token picks the
// tier, which the fields and the QuotaFailure name; a token without the
// claim, or naming no tier, gets the first; no token is Unauthenticated.
func TestJWTTiers(t *testing.T) {
	s := startServer(t, "-key", "jwt", "-jwt-secret", secret32, "-tier-claim", "plan", "-tier", "free=1/m", "-tier", "paid=3/m")
	assert.Contains(t, s.line, "tiers free 1/m (default), paid 3/m by claim plan")
	paid := bearer(t, gojwt.MapClaims{"sub": "bob", "plan": "paid"})
	for range 3 {
		r := s.empty(t, "authorization", paid)
		require.NoError(t, r.err)
		assert.Equal(t, `"paid";q=3;w=60`, r.field("ratelimit-policy"))
	}
	assertDenied(t, s.empty(t, "authorization", paid), "paid", time.Minute)
	for _, claims := range []gojwt.MapClaims{{"sub": "alice", "plan": "free"}, {"sub": "carol"}, {"sub": "dave", "plan": "gold"}} {
		token := bearer(t, claims)
		r := s.empty(t, "authorization", token)
		require.NoError(t, r.err, "%v", claims)
		assert.Equal(t, `"free";q=1;w=60`, r.field("ratelimit-policy"))
		assertDenied(t, s.empty(t, "authorization", token), "free", time.Minute)
	}
	forged, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{"sub": "eve", "plan": "paid"}).SignedString([]byte("another secret, another 32 bytes"))
	require.NoError(t, err)
	assert.Equal(t, codes.Unauthenticated, s.empty(t, "authorization", "Bearer "+forged).code(), "a token signed with another secret")
	assert.Equal(t, codes.Unauthenticated, s.empty(t).code(), "no token")
}

// bearer returns the authorization value of an HS256 token of claims signed
// with secret32, as examples/internal/mintjwt makes them.
func bearer(t *testing.T, claims gojwt.MapClaims) string {
	t.Helper()
	token, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, claims).SignedString([]byte(secret32))
	require.NoError(t, err)
	return "Bearer " + token
}

// -count-only-failures: a call ending OK gives its cost back; one ending
// with a code whose HTTP status is 400 or more counts.
func TestCountOnlyFailures(t *testing.T) {
	s := startServer(t, "-limit", "2/m", "-count-only-failures")
	for range 5 {
		r := s.unary(t, codes.OK)
		require.NoError(t, r.err)
		assert.Equal(t, "1", r.field("x-ratelimit-remaining"), "each success was given back")
	}
	assert.Equal(t, codes.NotFound, s.unary(t, codes.NotFound).code())
	assert.Equal(t, codes.PermissionDenied, s.unary(t, codes.PermissionDenied).code())
	assertDenied(t, s.unary(t, codes.NotFound), "default", time.Minute)
	assertDenied(t, s.unary(t, codes.OK), "default", time.Minute)
}

// Bad flags: one line saying what is wrong, the hint, and exit status 2;
// flags the HTTP servers have but the gRPC server does not are unknown.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-metrics-addr", "nowhere"},
		{"-metrics-addr", "127.0.0.1:70000"},
		{"-key", "cookie:session"},
		{"-key", "jwt"},
		{"-limit", "ten"},
		{"-fail", "sometimes"},
		{"-rules", "../rules-grpc.yaml", "-limit", "5/m"},
		{"-rules", "no-such-file.yaml"},
		{"-addr", "localhost"},
		{"-tier", "free=1/m"},
		{"extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := flags.LoadGRPC("grpc", args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			require.Len(t, lines, 2, "%q", stderr.String())
			assert.True(t, strings.HasPrefix(lines[0], "grpc: "), "%q", lines[0])
			assert.Equal(t, "run grpc -h for the flags", lines[1])
		})
	}
	var stderr bytes.Buffer
	_, code := flags.LoadGRPC("grpc", []string{"-metrics"}, &stderr)
	assert.Equal(t, 2, code, "-metrics is the HTTP servers'")
	assert.Contains(t, stderr.String(), "flag provided but not defined: -metrics\n")
}

// The server stops cleanly, with status 0, on SIGTERM and on SIGINT: this
// test runs the test binary as the server (see TestMain).
func TestSignalStops(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-limit", "2/m")
			cmd.Env = append(os.Environ(), runAsServer+"=1")
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line := make([]byte, 4096)
			n, err := stderr.Read(line) // the start line, once it serves
			require.NoError(t, err)
			assert.Regexp(t, `listening on grpc://127\.0\.0\.1:\d+\n$`, string(line[:n]))
			require.NoError(t, cmd.Process.Signal(sig))
			require.NoError(t, cmd.Wait(), "exit status 0")
		})
	}
}

// runAsServer, set in the environment, makes the test binary the server.
const runAsServer = "GRPCEX_RUN_AS_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(runAsServer) == "1" {
		os.Args = append([]string{"grpc"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// -trusted-proxies: the client a trusted gateway names in x-forwarded-for
// metadata is the key; from a peer that is not trusted the entry is ignored.
func TestTrustedProxies(t *testing.T) {
	s := startServer(t, "-limit", "1/m", "-trusted-proxies", "127.0.0.0/8")
	require.NoError(t, s.empty(t, "x-forwarded-for", "198.51.100.1").err)
	assertDenied(t, s.empty(t, "x-forwarded-for", "198.51.100.1"), "default", time.Minute)
	require.NoError(t, s.empty(t, "x-forwarded-for", "198.51.100.2").err, "another client behind the gateway")

	s = startServer(t, "-limit", "1/m", "-trusted-proxies", "10.0.0.0/8")
	require.NoError(t, s.empty(t, "x-forwarded-for", "198.51.100.1").err)
	assertDenied(t, s.empty(t, "x-forwarded-for", "198.51.100.2"), "default", time.Minute)
}
