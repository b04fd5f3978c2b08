package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clusterNodeTimeout is the cluster-node-timeout of StartClusterWithReplicas's
// nodes, in milliseconds: a master that stops answering is marked failed
// after it, and its replica is elected within about a second more.
const clusterNodeTimeout = "1000"

// manualFailoverTimeout is a little more than the time Redis gives a manual
// failover to complete (CLUSTER_MF_TIMEOUT, 5 s) before it gives up; Failover
// asks again after it.
const manualFailoverTimeout = 6 * time.Second

// clusterWait bounds how long StartClusterWithReplicas, Failover and
// KillMaster wait for the cluster to settle.
const clusterWait = 30 * time.Second

// Cluster is a Redis Cluster of three masters, each with one replica, that
// StartClusterWithReplicas started on free loopback ports, stopped when the
// test ends. Failover and KillMaster make a replica take over from its
// master while clients run. Its methods are safe for concurrent use.
type Cluster struct {
	nodes []*Server
	seeds []string

	mu sync.Mutex // serializes Failover and KillMaster
}

// StartClusterWithReplicas starts a Redis Cluster of three masters and three
// replicas (six redis-server processes, one replica per master) on free
// loopback ports, with a cluster-node-timeout of one second so that the
// replica of a master that dies is promoted within a few seconds, and waits
// until every node reports the cluster ok and every replica is in sync. It
// always starts processes (REDIS_CLUSTER_ADDRS is not used: a test that
// fails a master over must own it); the nodes are stopped when t ends. When
// redis-server or redis-cli is missing, t is skipped, or fails when CI=true.
func StartClusterWithReplicas(t testing.TB) *Cluster {
	t.Helper()
	requireBinaries(t, "redis-server", "redis-cli")
	root := t.TempDir()
	c := &Cluster{}
	for i := range 6 {
		dir := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := startServer(dir, "", []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", clusterNodeTimeout, "--repl-diskless-sync-delay", "0",
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.kill)
		c.nodes = append(c.nodes, s)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	var view []clusterNode
	c.waitFor(t, "every node ok, knowing 3 masters and 3 replicas in sync", func() error {
		var err error
		view, err = c.settled(6)
		return err
	})
	for _, n := range view {
		if n.master() {
			c.seeds = append(c.seeds, n.addr)
		}
	}
	slices.Sort(c.seeds)
	return c
}

// Addrs returns the addresses of the masters the cluster started with: the
// seeds a cluster client is given (it finds the replicas, and the masters
// after a failover, on its own).
func (c *Cluster) Addrs() []string { return slices.Clone(c.seeds) }

// Nodes returns the addresses of every node, masters and replicas, killed
// ones included.
func (c *Cluster) Nodes() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// Failover makes the replica of the master that serves key's slot take over
// with CLUSTER FAILOVER, and waits until the replica reports the role
// master, the old master reports the role of its replica, in sync, and
// every live node reports the cluster ok with the slot on the new master.
// A manual failover is coordinated: the master stops taking writes until
// its replica has caught up, so no acknowledged write is lost, and the
// clients paused meanwhile are redirected (MOVED) to the new master. key
// is a Redis key, or just its hash tag ("{tag}"). It returns the addresses
// of the old master and the new one.
func (c *Cluster) Failover(t testing.TB, key string) (from, to string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	slot, master, replica := c.ownerOf(t, key)
	c.waitInSync(t, master, replica)
	var asked time.Time
	c.waitFor(t, fmt.Sprintf("%s to take slot %d over from %s", replica.addr, slot, master.addr), func() error {
		if time.Since(asked) > manualFailoverTimeout { // never asked, or Redis gave up
			if reply, err := command(replica.addr, "CLUSTER", "FAILOVER"); err != nil || reply != "OK" {
				return fmt.Errorf("CLUSTER FAILOVER on %s: %q %v", replica.addr, reply, err)
			}
			asked = time.Now()
		}
		if err := hasRole(replica.addr, "master"); err != nil {
			return err
		}
		if err := replicaOf(master.addr, replica.addr); err != nil {
			return err
		}
		if err := c.servedBy(slot, replica.addr); err != nil {
			return err
		}
		return c.seenAsReplica(master.id, replica.id)
	})
	return master.addr, replica.addr
}

// KillMaster kills (SIGKILL) the master that serves key's slot and waits
// until the cluster has promoted its replica: the replica reports the role
// master and every live node reports the cluster ok with the slot on it.
// Until then (two to four seconds: the node timeout, one second, and an
// election) the slot's commands fail, and the other masters answer
// CLUSTERDOWN. Redis replicates asynchronously, so the writes the master
// acknowledged but had not yet sent to its replica are lost. key is a
// Redis key, or just its hash tag. It returns the addresses of the killed
// master and of the promoted replica; the killed node stays down.
func (c *Cluster) KillMaster(t testing.TB, key string) (killed, promoted string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	slot, master, replica := c.ownerOf(t, key)
	c.waitInSync(t, master, replica)
	c.server(master.addr).kill()
	c.waitFor(t, fmt.Sprintf("%s to be promoted to slot %d after %s was killed", replica.addr, slot, master.addr), func() error {
		if err := hasRole(replica.addr, "master"); err != nil {
			return err
		}
		return c.servedBy(slot, replica.addr)
	})
	return master.addr, replica.addr
}

// waitInSync waits until replica is in sync with master, as every live node
// sees them: a failover needs both.
func (c *Cluster) waitInSync(t testing.TB, master, replica clusterNode) {
	t.Helper()
	c.waitFor(t, "replica "+replica.addr+" in sync with "+master.addr+", in every node's view", func() error {
		if err := replicaOf(replica.addr, master.addr); err != nil {
			return err
		}
		return c.seenAsReplica(replica.id, master.id)
	})
}

// ownerOf returns key's slot, the master serving it and that master's
// replica, as a live node sees them; it fails t when the master has no
// live replica.
func (c *Cluster) ownerOf(t testing.TB, key string) (slot int, master, replica clusterNode) {
	t.Helper()
	addr := c.live()[0]
	reply, err := command(addr, "CLUSTER", "KEYSLOT", key)
	if err == nil {
		slot, err = strconv.Atoi(reply)
	}
	if err != nil {
		t.Fatalf("redistest: CLUSTER KEYSLOT %q on %s: %v", key, addr, err)
	}
	view, err := nodesOf(addr)
	if err != nil {
		t.Fatalf("redistest: CLUSTER NODES on %s: %v", addr, err)
	}
	for _, n := range view {
		if n.master() && !n.failed() && n.serves(slot) {
			master = n
		}
	}
	for _, n := range view {
		if !n.master() && !n.failed() && master.id != "" && n.masterID == master.id {
			return slot, master, n
		}
	}
	t.Fatalf("redistest: slot %d has no master with a live replica in %s's view: %+v", slot, addr, view)
	return 0, clusterNode{}, clusterNode{}
}

// servedBy reports why slot is not yet served by addr in every live node's
// view of a cluster in state ok, or nil.
func (c *Cluster) servedBy(slot int, addr string) error {
	for _, a := range c.live() {
		if err := clusterOK(a); err != nil {
			return err
		}
		view, err := nodesOf(a)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(view, func(n clusterNode) bool { return n.master() && n.serves(slot) })
		if i < 0 || view[i].addr != addr {
			return fmt.Errorf("%s does not see slot %d on %s yet", a, slot, addr)
		}
	}
	return nil
}

// seenAsReplica reports why some live node does not yet see the node of
// id replicaID as a replica of the node of id masterID, or nil.
func (c *Cluster) seenAsReplica(replicaID, masterID string) error {
	for _, a := range c.live() {
		view, err := nodesOf(a)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(view, func(n clusterNode) bool { return n.id == replicaID })
		if i < 0 || view[i].master() || view[i].masterID != masterID {
			return fmt.Errorf("%s does not see %s as a replica of %s yet", a, replicaID, masterID)
		}
	}
	return nil
}

// settled reports why the cluster is not yet settled with n live nodes:
// each in state ok and knowing n nodes, half of them masters, every replica
// in sync with its master; nil when it is, with the first node's view.
func (c *Cluster) settled(n int) ([]clusterNode, error) {
	var view []clusterNode
	for _, a := range c.live() {
		if err := clusterOK(a); err != nil {
			return nil, err
		}
		v, err := nodesOf(a)
		if err != nil {
			return nil, err
		}
		if masters := len(slices.DeleteFunc(slices.Clone(v), func(cn clusterNode) bool { return !cn.master() })); len(v) != n || masters != n/2 {
			return nil, fmt.Errorf("%s knows %d nodes, %d of them masters", a, len(v), masters)
		}
		if view == nil {
			view = v
		}
	}
	for _, r := range view {
		if r.master() {
			continue
		}
		i := slices.IndexFunc(view, func(m clusterNode) bool { return m.id == r.masterID })
		if i < 0 {
			return nil, fmt.Errorf("replica %s has no known master", r.addr)
		}
		if err := replicaOf(r.addr, view[i].addr); err != nil {
			return nil, err
		}
	}
	return view, nil
}

// live returns the addresses of the nodes that were not killed.
func (c *Cluster) live() []string {
	var addrs []string
	for _, n := range c.nodes {
		n.mu.Lock()
		if n.cmd != nil {
			addrs = append(addrs, n.addr)
		}
		n.mu.Unlock()
	}
	return addrs
}

// server returns the node listening on addr.
func (c *Cluster) server(addr string) *Server {
	i := slices.IndexFunc(c.nodes, func(s *Server) bool { return s.addr == addr })
	return c.nodes[i]
}

// waitFor polls cond every 20 ms until it returns nil, and fails t with
// its last error after clusterWait.
func (c *Cluster) waitFor(t testing.TB, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: waited %s for %s: %v", clusterWait, what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clusterOK reports why the node at addr does not see its cluster ok.
func clusterOK(addr string) error {
	info, err := command(addr, "CLUSTER", "INFO")
	if err != nil {
		return err
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return fmt.Errorf("%s: cluster state not ok", addr)
	}
	return nil
}

// FlushScripts sends SCRIPT FLUSH to every live node at once and returns
// when all have answered: each node's next call of a cached script gets
// NOSCRIPT.
func (c *Cluster) FlushScripts(t testing.TB) {
	t.Helper()
	live := c.live()
	errs := make([]error, len(live))
	var wg sync.WaitGroup
	for i, a := range live {
		wg.Go(func() { _, errs[i] = command(a, "SCRIPT", "FLUSH") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("redistest: SCRIPT FLUSH on %s: %v", live[i], err)
		}
	}
}

// ErrorReplies returns how many error replies whose first word is code
// (MOVED, NOSCRIPT, TRYAGAIN, ...) the live nodes have sent since they
// started, from INFO errorstats.
func (c *Cluster) ErrorReplies(t testing.TB, code string) int64 {
	t.Helper()
	var n int64
	for _, a := range c.live() {
		info, err := command(a, "INFO", "errorstats")
		if err != nil {
			t.Fatalf("redistest: INFO errorstats on %s: %v", a, err)
		}
		for line := range strings.Lines(info) {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_"+code+":count=")
			if !ok {
				continue
			}
			v, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				t.Fatalf("redistest: INFO errorstats on %s: %q", a, line)
			}
			n += v
		}
	}
	return n
}
