package rueidisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// TestLeaseFailover: ten instances, each its own rueidis client of the cluster, lease one
// hash-tagged key of a Redis Cluster with a replica per master, while the
// key's master is failed over to its replica (CLUSTER FAILOVER) and, in a
// second case, while every node's script cache is flushed at once: no
// decision fails, and the bound holds (storetest.RunTokenLeaseDisrupted).
// Then the key's master is killed: decisions fail until its replica is
// promoted and succeed again soon after, exactly
// (storetest.RunTokenLeaseOutage).
func TestLeaseFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starting a cluster takes seconds")
	}
	cluster := redistest.StartClusterWithReplicas(t)
	prefix := testPrefix()
	opts := []luascript.Option{luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour)}
	newStore := func(t *testing.T) core.Store {
		st, err := New(newClient(t, cluster.Addrs()...), opts...)
		require.NoError(t, err)
		return st
	}
	keyOf := func(t *testing.T, req core.TakeRequest) string {
		keys, err := newStore(t).(*luascript.Store).Keys(req)
		require.NoError(t, err)
		return keys[0]
	}
	t.Run("ManualFailover", func(t *testing.T) {
		moved := cluster.ErrorReplies(t, "MOVED")
		storetest.RunTokenLeaseDisrupted(t, newStore, func(t *testing.T, req core.TakeRequest) {
			from, to := cluster.Failover(t, keyOf(t, req))
			t.Logf("failed %s over from %s to %s", req.Namespace, from, to)
		})
		require.Greater(t, cluster.ErrorReplies(t, "MOVED"), moved, "clients were redirected to the new masters")
	})
	t.Run("ScriptFlush", func(t *testing.T) {
		noscript := cluster.ErrorReplies(t, "NOSCRIPT")
		storetest.RunTokenLeaseDisrupted(t, newStore, func(t *testing.T, _ core.TakeRequest) {
			cluster.FlushScripts(t)
		})
		require.Greater(t, cluster.ErrorReplies(t, "NOSCRIPT"), noscript, "calls met the flushed caches")
	})
	// Last: the key's master is killed, its replica promoted, and the
	// cluster left with a master without a replica.
	t.Run("KilledMaster", func(t *testing.T) {
		storetest.RunTokenLeaseOutage(t, newStore, func(t *testing.T, req core.TakeRequest) {
			killed, promoted := cluster.KillMaster(t, keyOf(t, req))
			t.Logf("killed %s; %s promoted", killed, promoted)
		})
	})
}
