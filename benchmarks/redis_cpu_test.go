package benchmarks

// What each Redis limiter's script costs the Redis server in CPU per call:
// usec_per_call of INFO commandstats while redis-benchmark sends EVALSHA.
//
//	bash benchmarks/redis_cpu.sh
//	RW_REDIS_CPU=1 go test -run '^TestRedisScriptCPU$' -v -count=1 ./benchmarks/
//
// RW_REDIS_CPU_N (calls per run, default 100000), RW_REDIS_CPU_ROUNDS
// (default 3) and RW_REDIS_CPU_PARTS=1 (add scripts that do one part of the
// work each, to see what each part costs) change the run;
// RW_REDIS_CPU_CALLGRIND=1 counts the instructions Redis executes per call
// instead, under valgrind (default 20000 calls per row), a figure other
// processes on the machine do not move.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// cpuKeys is redis-benchmark's -r: each call's key is one of this many,
// so a run meets fresh keys (the first call on a key, or one whose TTL ran
// out) and existing ones.
const cpuKeys = 10_000

// cpuLimit is the limit of every limiter's row: 100 per second, burst 100.
var cpuLimit = core.PerSecond(100)

// minimalExactScript is the floor of an exact decision: it reads the clock
// and the state and writes a state with a TTL, and computes nothing else. The
// state goes as string.format('%d') text, the cheapest exact form we know (a
// number Redis formats with %.17g costs it more), and the reply is one
// integer, the cheapest reply there is.
const minimalExactScript = `local t = redis.call('TIME')
local s = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], string.format('%d', t[1] * 1000000 + t[2]), 'PX', ARGV[1])
return 1`

// trivialScript is the floor of any Lua limiter: an EVALSHA that does
// nothing. Its rows send it with no KEYS and ARGV, and with the very KEYS and
// ARGV of ratewarden's GCRA call, so that what a script does is its row's
// count less the trivial row's with the same arguments.
const trivialScript = `return 1`

// cpuPartScripts each do one part of a decision's work, for
// RW_REDIS_CPU_PARTS, with the arguments they take (nil: the minimal exact
// script's): nothing, with one argument and with three (ratewarden's GCRA
// call); TIME; GET; GET and SET PX; the minimal exact script writing its
// state as a number Redis formats, and replying with a table of one and of
// three integers instead of one integer.
var cpuPartScripts = []struct {
	name, src string
	args      []string
}{
	{"part-return-1", `return 1`, nil},
	{"part-return-1-3-args", `return 1`, []string{"1", "10000", "1000000"}},
	{"part-time", "local t = redis.call('TIME')\nreturn 1", nil},
	{"part-get", "local s = redis.call('GET', KEYS[1])\nreturn 1", nil},
	{"part-get-set-px", "local s = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], 1, 'PX', ARGV[1])\nreturn 1", nil},
	{"part-minimal-number", strings.Replace(minimalExactScript, "string.format('%d', t[1] * 1000000 + t[2])", "t[1] * 1000000 + t[2]", 1), nil},
	{"part-minimal-table-1", strings.Replace(minimalExactScript, "return 1", "return {1}", 1), nil},
	{"part-minimal-table-3", strings.Replace(minimalExactScript, "return 1", "return {1, t[2] + 0, t[2] + 0}", 1), nil},
}

// cpuRow is one script and the arguments redis-benchmark sends it.
type cpuRow struct {
	name, src string
	keys      []string // with __rand_int__, which redis-benchmark replaces
	args      []string
}

// TestRedisScriptCPU runs every row's script with redis-benchmark against one
// redis-server, the rows back to back in each round, and prints the best
// usec_per_call of the rounds, its range and its ratio to the minimal exact
// script. Every call must succeed. Without RW_REDIS_CPU it runs one short
// round (2,000 calls a script), so the suite keeps the measurement working;
// with it, the measurement's defaults; with RW_REDIS_CPU_CALLGRIND set as well
// it counts instructions instead (see countInstructions).
func TestRedisScriptCPU(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Fatalf("redis-benchmark not found: %v; %s", err, redistest.InstallHint)
	}
	measuring := os.Getenv("RW_REDIS_CPU") != ""
	if measuring && os.Getenv("RW_REDIS_CPU_CALLGRIND") != "" {
		countInstructions(t, envInt(t, "RW_REDIS_CPU_N", 20_000))
		return
	}
	n, rounds := 2_000, 1
	if measuring {
		n = envInt(t, "RW_REDIS_CPU_N", 100_000)
		rounds = envInt(t, "RW_REDIS_CPU_ROUNDS", 3)
	}
	srv := redistest.StartLocal(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	rows := cpuRows(t)
	ctx := context.Background()
	shas := make([]string, len(rows))
	for i, r := range rows {
		sha, err := rdb.ScriptLoad(ctx, r.src).Result()
		require.NoError(t, err, r.name)
		shas[i] = sha
	}
	results := make([][]cpuRun, len(rows))
	for round := range rounds {
		for i, r := range rows {
			run := measureScript(t, rdb, srv.Addr(), shas[i], r, n)
			t.Logf("round %d %-26s %6.2f usec/call, %6.2f cpu/call, %3.0f%% of reads found a key", round+1, r.name, run.usec, run.cpuUsec, run.hitPct)
			results[i] = append(results[i], run)
		}
	}
	t.Logf("redis-benchmark -n %d -c 64 -P 16 -r %d EVALSHA, best of %d rounds (%s)\n%s",
		n, cpuKeys, rounds, redisVersion(t, rdb), cpuTable(rows, results))
}

// cpuRows are the rows: the trivial script with no arguments and with
// ratewarden's GCRA call's, the INCR + PEXPIRE floor, the minimal exact
// script, redis_rate's GCRA script, and ratewarden's six scripts with the KEYS
// and ARGV its store sends; then, with RW_REDIS_CPU_PARTS, the part scripts.
func cpuRows(t *testing.T) []cpuRow {
	key := "rw:{bench:__rand_int__}:x" // the length of ratewarden's key (no limit figures since state survives edits)
	gcra := ourCPURow(t, core.GCRA)
	rows := []cpuRow{
		{"trivial-no-args", trivialScript, nil, nil},
		{"trivial-gcra-args", trivialScript, gcra.keys, gcra.args},
		{"floor-incr-pexpire", incrScript, []string{key}, []string{"1000"}},
		{"minimal-exact", minimalExactScript, []string{key}, []string{"1000"}},
		{"redis_rate", redisRateScript(t), []string{"rate:bench:__rand_int__"}, []string{"100", "100", "1", "1"}},
	}
	for _, alg := range core.Algorithms() {
		rows = append(rows, ourCPURow(t, alg))
	}
	if os.Getenv("RW_REDIS_CPU_PARTS") != "" {
		for _, p := range cpuPartScripts {
			require.NotEqual(t, minimalExactScript, p.src, "%s differs from the minimal exact script", p.name)
			args := p.args
			if args == nil {
				args = []string{"1000"}
			}
			rows = append(rows, cpuRow{p.name, p.src, []string{key}, args})
		}
	}
	return rows
}

// errRecorded ends the recording backend's call.
var errRecorded = errors.New("benchmarks: call recorded")

// recordingBackend keeps the script call a store would send and sends nothing.
type recordingBackend struct {
	script     *luascript.Script
	keys, args []string
}

// ReadsIntegerReplies reports true, as the go-redis and rueidis bindings
// do, so the store hands it the calls it sends them.
func (b *recordingBackend) ReadsIntegerReplies() bool { return true }

func (b *recordingBackend) Eval(_ context.Context, script *luascript.Script, keys, args []string, _ []int64) ([]int64, error) {
	b.script, b.keys, b.args = script, slices.Clone(keys), slices.Clone(args)
	return nil, errRecorded
}

// ourCPURow is the call ratewarden's store sends for one request of cost 1
// under cpuLimit with alg, on Redis's clock (the default), for the key
// bench:__rand_int__.
func ourCPURow(t *testing.T, alg core.Algorithm) cpuRow {
	rec := &recordingBackend{}
	st, err := luascript.New(rec, luascript.WithLocalCache(0))
	require.NoError(t, err)
	req := core.TakeRequest{Key: "bench:__rand_int__", Algorithm: alg, Limits: []core.Limit{cpuLimit}, Cost: 1}
	_, err = st.Take(context.Background(), req)
	require.ErrorIs(t, err, errRecorded)
	return cpuRow{"ratewarden-" + alg.String(), rec.script.Source, rec.keys, rec.args}
}

// redisRateScript returns redis_rate's allowN script (its GCRA), read from the
// module's source: the variable that holds it is not exported.
func redisRateScript(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/go-redis/redis_rate/v10").Output()
	require.NoError(t, err, "go list redis_rate")
	src, err := os.ReadFile(strings.TrimSpace(string(out)) + "/lua.go")
	require.NoError(t, err)
	const open = "var allowN = redis.NewScript(`"
	_, body, ok := strings.Cut(string(src), open)
	require.True(t, ok, "redis_rate's lua.go has no %q", open)
	body, _, ok = strings.Cut(body, "`)")
	require.True(t, ok, "redis_rate's allowN script does not end")
	return body
}

// cpuRun is one row's figures in one round.
type cpuRun struct {
	usec    float64 // usec_per_call of EVALSHA
	cpuUsec float64 // the main thread's CPU time per call, I/O included
	hitPct  float64 // keyspace hits among the reads, in percent
}

// measureScript empties the server, resets its statistics, runs n calls of
// the row with redis-benchmark and reads usec_per_call. Every call must have
// succeeded.
func measureScript(t *testing.T, rdb *goredis.Client, addr, sha string, r cpuRow, n int) cpuRun {
	ctx := context.Background()
	require.NoError(t, rdb.FlushAll(ctx).Err())
	require.NoError(t, rdb.ConfigResetStat(ctx).Err())
	cpu0 := mainThreadCPU(t, rdb)
	runBenchmark(t, addr, sha, r, n)
	cpu := mainThreadCPU(t, rdb) - cpu0
	stats := checkCalls(t, rdb, r, n)
	usec, err := strconv.ParseFloat(stats["usec_per_call"], 64)
	require.NoError(t, err)
	return cpuRun{usec: usec, cpuUsec: cpu * 1e6 / float64(n), hitPct: hitPct(t, rdb)}
}

// runBenchmark sends n calls of the row's script to addr with redis-benchmark.
func runBenchmark(t *testing.T, addr, sha string, r cpuRow, n int) {
	host, port, _ := strings.Cut(addr, ":")
	args := []string{"-h", host, "-p", port, "-n", strconv.Itoa(n), "-c", "64", "-P", "16", "-r", strconv.Itoa(cpuKeys), "-q",
		"EVALSHA", sha, strconv.Itoa(len(r.keys))}
	args = append(append(args, r.keys...), r.args...)
	out, err := exec.Command("redis-benchmark", args...).CombinedOutput()
	require.NoError(t, err, "redis-benchmark: %s", out)
}

// checkCalls requires that EVALSHA ran n times since the statistics were
// reset, none failing, and returns its commandstats fields.
func checkCalls(t *testing.T, rdb *goredis.Client, r cpuRow, n int) map[string]string {
	stats := infoFields(t, rdb, "commandstats", "cmdstat_evalsha")
	require.Equal(t, strconv.Itoa(n), stats["calls"], "%s: calls", r.name)
	require.Equal(t, "0", stats["failed_calls"], "%s: failed calls (errorstats: %v)", r.name, rdb.Info(context.Background(), "errorstats").Val())
	return stats
}

// hitPct returns the keyspace hits among the reads since the statistics were
// reset, in percent.
func hitPct(t *testing.T, rdb *goredis.Client) float64 {
	ks := infoFields(t, rdb, "stats", "")
	hits, _ := strconv.ParseFloat(ks["keyspace_hits"], 64)
	misses, _ := strconv.ParseFloat(ks["keyspace_misses"], 64)
	if hits+misses == 0 {
		return 0
	}
	return 100 * hits / (hits + misses)
}

// infoFields returns the fields of one INFO section: of the line that starts
// with prefix, as name=value pairs (commandstats), or with prefix "" of every
// name:value line (stats).
func infoFields(t *testing.T, rdb *goredis.Client, section, prefix string) map[string]string {
	info, err := rdb.Info(context.Background(), section).Result()
	require.NoError(t, err)
	fields := map[string]string{}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if prefix == "" {
			fields[name] = value
			continue
		}
		if name != prefix {
			continue
		}
		for kv := range strings.SplitSeq(value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = v
		}
	}
	if prefix != "" {
		require.NotEmpty(t, fields, "INFO %s has no %s", section, prefix)
	}
	return fields
}

// mainThreadCPU returns the CPU time, in seconds, Redis's main thread has
// used (user and system): unlike usec_per_call, which is wall time, it does
// not count the time the thread waited for a core another process held.
func mainThreadCPU(t *testing.T, rdb *goredis.Client) float64 {
	f := infoFields(t, rdb, "cpu", "")
	user, err := strconv.ParseFloat(f["used_cpu_user_main_thread"], 64)
	require.NoError(t, err)
	sys, err := strconv.ParseFloat(f["used_cpu_sys_main_thread"], 64)
	require.NoError(t, err)
	return user + sys
}

func redisVersion(t *testing.T, rdb *goredis.Client) string {
	return "redis " + infoFields(t, rdb, "server", "")["redis_version"]
}

// cpuTable formats each row's best usec_per_call of the rounds, their range
// and the best's ratio to the minimal exact script's, then the same of the
// main thread's CPU time per call, and the keyspace hits of the best round.
func cpuTable(rows []cpuRow, results [][]cpuRun) string {
	var floor, floorCPU float64
	for i, r := range rows {
		if r.name == "minimal-exact" {
			floor, _, _ = cpuBest(results[i], func(r cpuRun) float64 { return r.usec })
			floorCPU, _, _ = cpuBest(results[i], func(r cpuRun) float64 { return r.cpuUsec })
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %9s %13s %9s | %9s %13s %9s | %5s\n",
		"script", "usec/call", "range", "x minimal", "cpu/call", "range", "x minimal", "hits")
	for i, r := range rows {
		lo, hi, at := cpuBest(results[i], func(r cpuRun) float64 { return r.usec })
		clo, chi, _ := cpuBest(results[i], func(r cpuRun) float64 { return r.cpuUsec })
		fmt.Fprintf(&b, "%-26s %9.2f %6.2f-%-6.2f %8.2fx | %9.2f %6.2f-%-6.2f %8.2fx | %4.0f%%\n",
			r.name, lo, lo, hi, lo/floor, clo, clo, chi, clo/floorCPU, results[i][at].hitPct)
	}
	return b.String()
}

// cpuBest returns the lowest and highest figure of runs and the lowest's index.
func cpuBest(runs []cpuRun, figure func(cpuRun) float64) (lo, hi float64, at int) {
	lo, hi = figure(runs[0]), figure(runs[0])
	for i, r := range runs[1:] {
		if v := figure(r); v < lo {
			lo, at = v, i+1
		}
		hi = max(hi, figure(r))
	}
	return lo, hi, at
}

// envInt reads a positive integer from the environment, or def when unset.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%q", name, v)
	require.Positive(t, n, "%s=%q", name, v)
	return n
}
