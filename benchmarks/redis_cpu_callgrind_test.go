package benchmarks

// The instruction count of each limiter's script, for TestRedisScriptCPU with
// RW_REDIS_CPU_CALLGRIND=1. Time per call on a shared machine moves with
// whatever else runs (two runs minutes apart differ by 2x on a busy 2-core
// VM); the instructions Redis executes per call do not, so they rank script
// variants where timings cannot. They are not time: a cache miss or a
// system call counts as one instruction. Needs valgrind (callgrind).

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// callgrindRedis is a redis-server running under callgrind.
type callgrindRedis struct {
	addr, out string
	pid       int
	dumps     int
}

// startCallgrindRedis starts redis-server under valgrind's callgrind on a
// free loopback port, without persistence, counting from the start; the
// server is killed when t ends.
func startCallgrindRedis(t *testing.T) *callgrindRedis {
	for _, bin := range []string{"valgrind", "callgrind_control", "redis-server"} {
		_, err := exec.LookPath(bin)
		require.NoError(t, err, "%s is needed to count instructions", bin)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	dir := t.TempDir()
	out := filepath.Join(dir, "callgrind.out")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+out,
		"redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := &callgrindRedis{addr: "127.0.0.1:" + port, out: out, pid: cmd.Process.Pid}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", c.addr, time.Second)
		if err == nil {
			require.NoError(t, conn.Close())
			return c
		}
		require.True(t, time.Now().Before(deadline), "redis-server under callgrind did not listen in a minute: %v", err)
	}
}

// control sends callgrind_control's command (--zero, --dump=name) to the server.
func (c *callgrindRedis) control(t *testing.T, arg string) {
	out, err := exec.Command("callgrind_control", arg, strconv.Itoa(c.pid)).CombinedOutput()
	require.NoError(t, err, "callgrind_control %s: %s", arg, out)
}

// count returns the instructions counted since the last zero: it dumps the
// counters and reads the dump's summary line.
func (c *callgrindRedis) count(t *testing.T, name string) int64 {
	c.control(t, "--dump="+name)
	c.dumps++
	b, err := os.ReadFile(c.out + "." + strconv.Itoa(c.dumps))
	require.NoError(t, err, "callgrind's dump %d", c.dumps)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "summary: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("callgrind's dump %d has no summary line", c.dumps)
	return 0
}

// countInstructions runs every row once, n calls with redis-benchmark as in
// measureScript (after 2,000 calls to warm up and a FLUSHALL), against a
// redis-server under callgrind, and prints the instructions Redis executed
// per call (the network and the protocol included) and their ratio to the
// minimal exact script's.
func countInstructions(t *testing.T, n int) {
	srv := startCallgrindRedis(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.addr, ReadTimeout: time.Minute})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	rows := cpuRows(t)
	counts := make([]float64, len(rows))
	hits := make([]float64, len(rows))
	for i, r := range rows {
		sha, err := rdb.ScriptLoad(ctx, r.src).Result()
		require.NoError(t, err, r.name)
		runBenchmark(t, srv.addr, sha, r, 2000)
		require.NoError(t, rdb.FlushAll(ctx).Err())
		require.NoError(t, rdb.ConfigResetStat(ctx).Err())
		srv.control(t, "--zero")
		runBenchmark(t, srv.addr, sha, r, n)
		counts[i] = float64(srv.count(t, r.name)) / float64(n)
		checkCalls(t, rdb, r, n)
		hits[i] = hitPct(t, rdb)
		t.Logf("%-26s %8.0f instructions/call", r.name, counts[i])
	}
	var floor float64
	for i, r := range rows {
		if r.name == "minimal-exact" {
			floor = counts[i]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %14s %10s %6s\n", "script", "instr/call", "x minimal", "hits")
	for i, r := range rows {
		fmt.Fprintf(&b, "%-26s %14.0f %9.2fx %5.0f%%\n", r.name, counts[i], counts[i]/floor, hits[i])
	}
	t.Logf("redis-benchmark -n %d -c 64 -P 16 -r %d EVALSHA under callgrind (%s)\n%s", n, cpuKeys, redisVersion(t, rdb), b.String())
}
