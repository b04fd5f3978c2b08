package grpcmw_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
)

// rulesDocument is adaptertest.RulesDocument for gRPC: a policy per method,
// one on calls that carry a metadata entry, a dry run over everything, an
// exemption (the health service), an override that blocks a client, a
// policy that counts only failures, and one on a streaming method. Calls are
// matched as POSTs of their full method.
const rulesDocument = `schema: 1
version: 1
policies:
  - name: unary
    match: {paths: ["/grpc.testing.TestService/UnaryCall"]}
    algorithm: fixed-window
    limits: [2/m]
    overrides:
      - {key: 198.51.100.66, blocked: true}
  - name: writes
    match:
      paths: ["/grpc.testing.TestService/{method}"]
      methods: [POST]
      headers: [{name: x-write, present: true}]
    algorithm: fixed-window
    limits: [1/m]
  - name: site
    match: {prefixes: [/]}
    algorithm: fixed-window
    limits: [3/m]
    dry_run: true
  - name: failures
    match: {paths: ["/grpc.testing.TestService/CacheableUnaryCall"]}
    algorithm: fixed-window
    limits: [1/m]
    count: failures
  - name: health
    match: {prefixes: [/grpc.health.v1.Health/]}
    unlimited: true
    replaces: [site]
  - name: streams
    match: {paths: ["/grpc.testing.TestService/FullDuplexCall", "/grpc.testing.TestService/StreamingInputCall"]}
    algorithm: fixed-window
    limits: [1/m]
    replaces: [site]
    key: {header: x-stream-client}
`

// rulesStep is one call of the script and what its answer must be: its code
// and header fields ("" for a field that must be absent), and, for a denial,
// the QuotaFailure's subject.
type rulesStep struct {
	name, method, peer string
	kv                 []string
	ask, code          codes.Code
	fields             map[string]string
	subject            string
}

const (
	unaryCall     = testgrpc.TestService_UnaryCall_FullMethodName
	cacheableCall = testgrpc.TestService_CacheableUnaryCall_FullMethodName
	emptyCall     = testgrpc.TestService_EmptyCall_FullMethodName
	healthCheck   = healthpb.Health_Check_FullMethodName
	duplexCall    = testgrpc.TestService_FullDuplexCall_FullMethodName
)

var rulesScript = []rulesStep{
	{name: "a method's policy and the site's", method: unaryCall, peer: peerA, fields: map[string]string{
		"ratelimit-policy":  `"unary";q=2;w=60, "site";q=3;w=60`,
		"ratelimit":         `"unary";r=1;t=60, "site";r=2;t=60`,
		"x-ratelimit-limit": "2",
	}},
	{name: "a metadata entry adds a policy", method: unaryCall, peer: peerA, kv: []string{"x-write", "1"}, fields: map[string]string{
		"ratelimit-policy": `"unary";q=2;w=60, "writes";q=1;w=60, "site";q=3;w=60`,
		"ratelimit":        `"unary";r=0;t=60, "writes";r=0;t=60, "site";r=1;t=60`,
	}},
	{name: "the first policy to deny answers, naming itself", method: unaryCall, peer: peerA, kv: []string{"x-write", "1"},
		code: codes.ResourceExhausted, subject: "unary", fields: map[string]string{
			"ratelimit-policy": `"unary";q=2;w=60, "writes";q=1;w=60, "site";q=3;w=60`,
			"ratelimit":        `"unary";r=0;t=60`,
			"retry-after":      "60",
		}},
	{name: "the site's quota runs out", method: emptyCall, peer: peerA, fields: map[string]string{
		"ratelimit-policy": `"site";q=3;w=60`,
		"ratelimit":        `"site";r=0;t=60`,
	}},
	{name: "a dry run's denial goes on, with the truth and no retry-after", method: emptyCall, peer: peerA, fields: map[string]string{
		"ratelimit":   `"site";r=0;t=60`,
		"retry-after": "",
	}},
	{name: "an exemption replaces the site's policy", method: healthCheck, peer: peerA, fields: map[string]string{
		"ratelimit-policy": "",
	}},
	{name: "a blocked client's quota is 0", method: unaryCall, peer: "198.51.100.66:1", code: codes.ResourceExhausted, subject: "unary/override",
		fields: map[string]string{
			"ratelimit-policy":  `"unary/override";q=0;w=60, "site";q=3;w=60`,
			"x-ratelimit-limit": "0",
		}},
	{name: "a success is given back", method: cacheableCall, peer: peerB, fields: map[string]string{
		"ratelimit-policy": `"site";q=3;w=60, "failures";q=1;w=60`,
	}},
	{name: "so a failure still passes", method: cacheableCall, peer: peerB, ask: codes.Unauthenticated, code: codes.Unauthenticated},
	{name: "and the next failure is denied", method: cacheableCall, peer: peerB, code: codes.ResourceExhausted, subject: "failures",
		fields: map[string]string{"ratelimit": `"failures";r=0;t=60`}},
	{name: "a stream is decided when it opens", method: duplexCall, peer: peerB, kv: []string{"x-stream-client", "s1"}, fields: map[string]string{
		"ratelimit-policy": `"streams";q=1;w=60`,
		"ratelimit":        `"streams";r=0;t=60`,
	}},
	{name: "and denied at open, by its own key", method: duplexCall, peer: peerA, kv: []string{"x-stream-client", "s1"},
		code: codes.ResourceExhausted, subject: "streams", fields: map[string]string{"retry-after": "60"}},
}

// TestRules runs the rule-driven script against a real rules.Set: one rules
// document, with HTTP's matching, decides gRPC calls by full method.
func TestRules(t *testing.T) {
	clk := core.NewManualClock(t0)
	st, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := rules.Parse([]byte(rulesDocument), "rules.yaml")
	require.NoError(t, err)
	set, err := rules.New(st, doc, rules.WithClock(clk))
	require.NoError(t, err)
	ic, err := grpcmw.Middleware(set)
	require.NoError(t, err)
	h := start(t, ic)
	for _, step := range rulesScript {
		t.Run(step.name, func(t *testing.T) {
			var r result
			if step.method == duplexCall {
				r = h.duplex(step.peer, step.kv...)
			} else {
				r = h.invoke(step.method, step.ask, step.peer, step.kv...)
			}
			require.Equal(t, step.code, status.Code(r.err), "%v", r.err)
			for key, want := range step.fields {
				assert.Equal(t, want, r.field(key), key)
			}
			if step.subject != "" {
				_, qf := details(t, r.err)
				require.NotNil(t, qf)
				require.Len(t, qf.GetViolations(), 1, "one violation: one policy denied")
				assert.Equal(t, step.subject, qf.GetViolations()[0].GetSubject())
			}
		})
	}
	assert.Equal(t, int64(7), h.srv.calls.Load(), "the handler ran for every call of the test service let through, and only for those")
}

// TestRulesHostsAndContentType matches a call's :authority with hosts, and
// keeps a policy to gRPC calls with the content-type every call carries.
func TestRulesHostsAndContentType(t *testing.T) {
	clk := core.NewManualClock(t0)
	st, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: grpc
    match: {headers: [{name: content-type, equals: application/grpc}]}
    limits: [5/m]
  - name: host
    match: {hosts: [bufconn]}
    limits: [4/m]
  - name: http
    match: {methods: [GET]}
    limits: [3/m]
`), "rules.yaml")
	require.NoError(t, err)
	set, err := rules.New(st, doc, rules.WithClock(clk))
	require.NoError(t, err)
	ic, err := grpcmw.Middleware(set)
	require.NoError(t, err)
	r := start(t, ic).invoke(emptyCall, codes.OK, peerA)
	require.NoError(t, r.err)
	assert.Equal(t, `"grpc";q=5;w=60, "host";q=4;w=60`, r.field("ratelimit-policy"), "a call is a POST: the GET policy does not apply")
}
