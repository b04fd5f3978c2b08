package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// NewClusterStore makes a binding's store on a client of the cluster whose
// nodes addrs lists, with opts.
type NewClusterStore func(t *testing.T, addrs []string, opts ...luascript.Option) (core.Store, error)

// LeaseFailover runs token leases through a Redis Cluster's trouble: ten
// instances, each its own client of a cluster with a replica per master
// (StartClusterWithReplicas), lease one hash-tagged key while the key's
// master is failed over to its replica (CLUSTER FAILOVER) and, in a second
// case, while every node's script cache is flushed at once: no decision
// fails, and the bound holds (storetest.RunTokenLeaseDisrupted); clients
// were redirected (MOVED) and met the flushed caches (NOSCRIPT). Then the
// key's master is killed: decisions fail until its replica is promoted and
// succeed again soon after, exactly (storetest.RunTokenLeaseOutage).
func LeaseFailover(t *testing.T, prefix string, newStore NewClusterStore) {
	if testing.Short() {
		t.Skip("starting a cluster takes seconds")
	}
	cluster := StartClusterWithReplicas(t)
	opts := []luascript.Option{luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour)}
	storeOf := func(t *testing.T) core.Store {
		st, err := newStore(t, cluster.Addrs(), opts...)
		must.NoError(t, err)
		return st
	}
	keyOf := func(t *testing.T, req core.TakeRequest) string {
		keys, err := storeOf(t).(*luascript.Store).Keys(req)
		must.NoError(t, err)
		return keys[0]
	}
	t.Run("ManualFailover", func(t *testing.T) {
		moved := cluster.ErrorReplies(t, "MOVED")
		storetest.RunTokenLeaseDisrupted(t, storeOf, func(t *testing.T, req core.TakeRequest) {
			from, to := cluster.Failover(t, keyOf(t, req))
			t.Logf("failed %s over from %s to %s", req.Namespace, from, to)
		})
		must.Greater(t, cluster.ErrorReplies(t, "MOVED"), moved, "clients were redirected to the new masters")
	})
	t.Run("ScriptFlush", func(t *testing.T) {
		noscript := cluster.ErrorReplies(t, "NOSCRIPT")
		storetest.RunTokenLeaseDisrupted(t, storeOf, func(t *testing.T, _ core.TakeRequest) {
			cluster.FlushScripts(t)
		})
		must.Greater(t, cluster.ErrorReplies(t, "NOSCRIPT"), noscript, "calls met the flushed caches")
	})
	// Last: the key's master is killed, its replica promoted, and the
	// cluster left with a master without a replica.
	t.Run("KilledMaster", func(t *testing.T) {
		storetest.RunTokenLeaseOutage(t, storeOf, func(t *testing.T, req core.TakeRequest) {
			killed, promoted := cluster.KillMaster(t, keyOf(t, req))
			t.Logf("killed %s; %s promoted", killed, promoted)
		})
	})
}

// IntegerReplies checks a binding that is a luascript.IntegerReplier: it
// reads the reply of a script whose IntegerReply is set, one integer,
// appending it after what dst holds, through the EVAL fallback and then
// EVALSHA, exactly up to 2^53; an array, a string or an error reply to such
// a script is an error.
func IntegerReplies(t *testing.T, b luascript.Backend) {
	ctx := context.Background()
	r, ok := b.(luascript.IntegerReplier)
	must.True(t, ok, "the binding is an IntegerReplier")
	must.True(t, r.ReadsIntegerReplies())
	script := func(body string) *luascript.Script {
		sha, src := UnseenScript(body)
		return &luascript.Script{Source: src, SHA1: sha, IntegerReply: true}
	}
	sum := script("return ARGV[1] - ARGV[2] + #KEYS")
	for range 2 { // EVAL on NOSCRIPT, then EVALSHA
		got, err := b.Eval(ctx, sum, []string{"{redistest}:a"}, []string{"-5", "9007199254740986"}, []int64{42})
		must.NoError(t, err)
		must.Equal(t, []int64{42, -(1<<53 - 2)}, got)
	}
	for name, src := range map[string]string{
		"an array":       "return {1}",
		"a string":       "return 'x'",
		"an error reply": "return redis.error_reply('redistest: boom')",
	} {
		_, err := b.Eval(ctx, script(src), []string{"{redistest}:a"}, nil, nil)
		must.Error(t, err, name)
	}
}
