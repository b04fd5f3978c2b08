package redistest

import (
	"slices"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// TestClusterFailoverAndKill: a cluster of three masters and three replicas;
// a manual failover moves a key's slot to the replica with the key's value,
// the old master redirects to the new one, and a killed master's replica is
// promoted with the value it had replicated.
func TestClusterFailoverAndKill(t *testing.T) {
	c := StartClusterWithReplicas(t)
	seeds := c.Addrs()
	must.Len(t, seeds, 3)
	must.Len(t, c.Nodes(), 6)
	for _, a := range c.Nodes() {
		info, err := command(a, "CLUSTER", "INFO")
		must.NoError(t, err)
		expect.Contains(t, info, "cluster_state:ok")
		expect.Contains(t, info, "cluster_known_nodes:6")
		if slices.Contains(seeds, a) {
			expect.NoError(t, hasRole(a, "master"))
		} else {
			expect.NoError(t, hasRole(a, "slave"), "the nodes that are not seeds are replicas")
		}
	}
	const key = "{failover}k"
	_, master, _ := c.ownerOf(t, key)
	reply, err := command(master.addr, "SET", key, "v")
	must.NoError(t, err)
	must.Equal(t, "OK", reply)

	from, to := c.Failover(t, key)
	must.Equal(t, master.addr, from)
	must.NotEqual(t, from, to)
	reply, err = command(to, "GET", key)
	must.NoError(t, err)
	expect.Equal(t, "v", reply, "a manual failover loses nothing")
	_, err = command(from, "GET", key)
	must.Error(t, err)
	expect.True(t, strings.HasPrefix(err.Error(), "MOVED ") && strings.HasSuffix(err.Error(), " "+to), err.Error())
	expect.NoError(t, replicaOf(from, to), "the old master replicates the new one")

	expect.Positive(t, c.ErrorReplies(t, "MOVED"), "the GET on the old master was redirected")

	checkFlushScripts(t, c, to)

	back, again := c.Failover(t, key)
	must.Equal(t, to, back, "a second failover moves the slot back")
	must.Equal(t, from, again)

	killed, promoted := c.KillMaster(t, key)
	must.Equal(t, from, killed)
	must.Equal(t, to, promoted)
	reply, err = command(promoted, "GET", key)
	must.NoError(t, err)
	expect.Equal(t, "v", reply, "a value replicated before the kill survives it")
	expect.Len(t, c.live(), 5)
	_, err = command(killed, "PING")
	expect.Error(t, err, "the killed master stays down")
}

func TestClusterNodesParse(t *testing.T) {
	n := clusterNode{flags: []string{"myself", "master"}, masterID: "-", slots: [][2]int{{0, 5460}, {7000, 7000}}}
	expect.True(t, n.master())
	expect.False(t, n.failed())
	expect.True(t, n.serves(0))
	expect.True(t, n.serves(5460))
	expect.True(t, n.serves(7000))
	expect.False(t, n.serves(5461))
	expect.True(t, clusterNode{flags: []string{"master", "fail?"}}.failed())
}

// checkFlushScripts loads a script on every node, flushes them all with
// FlushScripts, and checks that none has it and that ErrorReplies counts the
// NOSCRIPT an EVALSHA of it on master then gets.
func checkFlushScripts(t *testing.T, c *Cluster, master string) {
	t.Helper()
	var sha string
	var err error
	for _, a := range c.Nodes() {
		sha, err = command(a, "SCRIPT", "LOAD", "return 1")
		must.NoError(t, err)
	}
	c.FlushScripts(t)
	for _, a := range c.Nodes() {
		exists, err := query(a, "SCRIPT", "EXISTS", sha)
		must.NoError(t, err)
		expect.Equal(t, []any{int64(0)}, exists, a, "flushed")
	}
	noscript := c.ErrorReplies(t, "NOSCRIPT")
	_, err = command(master, "EVALSHA", sha, "0")
	must.Error(t, err)
	expect.True(t, strings.HasPrefix(err.Error(), "NOSCRIPT"), err.Error())
	expect.Equal(t, noscript+1, c.ErrorReplies(t, "NOSCRIPT"), "ErrorReplies counts the NOSCRIPT")
}
