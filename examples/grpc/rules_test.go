package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/ratewarden/ratewarden/examples/internal/servertest"
	"github.com/ratewarden/ratewarden/rules"
)

// The policies of examples/rules-grpc.yaml, as the ratelimit-policy field
// names them.
const (
	unaryPolicy   = `"unary";q=5;w=60`
	servicePolicy = `"service";q=100;w=1`
)

// With -rules examples/rules-grpc.yaml: UnaryCall counts only its failures
// per IP, beside the service's budget per API key; the blocked key is
// refused at once; a call without a key is Unauthenticated; the health
// service is never limited; and an edit of the file takes effect without a
// restart.
func TestRulesMode(t *testing.T) {
	path := servertest.CopyRules(t, "rules-grpc.yaml")
	s := startServer(t, "-rules", path, "-metrics-addr", "127.0.0.1:0")
	assert.Contains(t, s.line, "rules "+path+", counters on memory, failing open unless its policy says closed (version 1, 3 policies)")
	first := waitReload(t, s)
	require.NoError(t, first.Err)
	assert.Equal(t, int64(1), first.Version)
	key := []string{"x-api-key", "k-rules"}

	for range 2 {
		r := s.unary(t, codes.OK, key...)
		require.NoError(t, r.err)
		assert.Equal(t, unaryPolicy+", "+servicePolicy, r.field("ratelimit-policy"))
		assert.Equal(t, "4", r.header.Get("x-ratelimit-remaining")[0], "each success was given back")
	}
	for range 5 {
		assert.Equal(t, codes.NotFound, s.unary(t, codes.NotFound, key...).code())
	}
	r := s.unary(t, codes.NotFound, key...)
	assertDenied(t, r, "unary", time.Minute)
	assert.True(t, strings.HasPrefix(r.field("ratelimit"), `"unary";r=0;`), "ratelimit %q", r.field("ratelimit"))
	assertDenied(t, s.unary(t, codes.OK, key...), "unary", time.Minute)

	r = s.empty(t, key...)
	require.NoError(t, r.err, "the other methods are the service's only")
	assert.Equal(t, servicePolicy, r.field("ratelimit-policy"))
	require.NoError(t, s.duplex(t, key...).err)

	r = s.empty(t, "x-api-key", "leaked-key-0001")
	assertDenied(t, r, "service/override", time.Second)
	assert.True(t, strings.HasPrefix(r.field("ratelimit-policy"), `"service/override";q=0;`), "ratelimit-policy %q", r.field("ratelimit-policy"))
	assert.Equal(t, codes.Unauthenticated, s.empty(t).code(), "no x-api-key")
	for range 3 {
		s.assertServing(t)
		s.assertReflection(t)
	}

	code, body := s.getMetrics(t, "/metrics")
	require.Equal(t, 200, code)
	assert.Contains(t, body, `ratewarden_decisions_total{outcome="denied",policy="unary"} 2`+"\n")

	checkRulesEdit(t, s, path, key)
}

// checkRulesEdit edits the rules file of s (the service at 200/s, version
// 2) and checks that the edit takes effect without a restart; then that a
// broken edit is refused and the rules in force stay.
func checkRulesEdit(t *testing.T, s *server, path string, key []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(strings.Replace(string(raw), "version: 1\n", "version: 2\n", 1), "limits: [100/s]", "limits: [200/s]", 1)
	require.NotEqual(t, string(raw), edited)
	servertest.SaveFile(t, path, []byte(edited))
	reload := waitReload(t, s)
	require.NoError(t, reload.Err)
	assert.Equal(t, int64(2), reload.Version)
	r := s.empty(t, key...)
	require.NoError(t, r.err)
	assert.Equal(t, `"service";q=200;w=1`, r.field("ratelimit-policy"), "the edit took effect without a restart")

	servertest.SaveFile(t, path, []byte(strings.Replace(edited, "version: 2\n", "version: 3\n", 1)+"  - {name: broken, limits: [10/x]}\n"))
	reload = waitReload(t, s)
	require.ErrorIs(t, reload.Err, rules.ErrInvalidRules)
	assert.Equal(t, int64(2), reload.Version, "the rules in force stay")
	r = s.empty(t, key...)
	require.NoError(t, r.err)
	assert.Equal(t, `"service";q=200;w=1`, r.field("ratelimit-policy"))
	log := s.log.String()
	assert.Contains(t, log, `msg="ratewarden: rules loaded" source=`+path+" version=2\n")
	assert.Contains(t, log, `msg="ratewarden: rules refused; the rules in force stay"`)
}

// waitReload waits for the next reload of the server's rules, taken or
// refused: an event, not a time that passes.
func waitReload(t *testing.T, s *server) rules.Reload {
	t.Helper()
	select {
	case r := <-s.reloads:
		return r
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no reload of the rules", "the error log:\n%s", s.log)
		return rules.Reload{}
	}
}
