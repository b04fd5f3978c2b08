package benchmarks

// BenchmarkRedisRotation: the Redis rows that matter for the go-redis path,
// side by side in one command and in one process, measured in short slots
// that take turns, so a change in the machine's load (a busy neighbour, a
// slow minute) falls on every row alike instead of on whichever row ran then:
// on a shared 2-core VM separate runs of BenchmarkRedis's rows move by 2x
// from one minute to the next.
//
//	go test -run '^$' -bench 'RedisRotation/g=64' -benchtime 20x ./benchmarks
//
// Each of b.N rounds runs every row for one slot of rotationSlot decisions
// from g goroutines, in an order that rotates by one each round. Per row it
// reports the median over the rounds of its decisions per second (dec/s:row),
// of its ratio to the go-redis floor in the same round (xfloor:row), and of
// its allocations per decision (allocs/dec:row; the process's, so a client's
// background work counts too).

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// rotationSlot is the decisions a row makes in one turn: about 50 ms at
// 40,000 a second.
const rotationSlot = 2000

// rotationFloor is the row every other is divided by.
const rotationFloor = "floor-goredis-evalsha"

// rotationRows are BenchmarkRedisRotation's rows, as BenchmarkRedis names
// them, and the ratewarden script floor (ourScriptFloor).
var rotationRows = []string{
	rotationFloor, ourScriptFloorName, "floor-rueidis-evalsha",
	"ratewarden-goredis-gcra", "ratewarden-rueidis-gcra", "redis_rate", "ulule",
}

// ourScriptFloorName names ourScriptFloor's row.
const ourScriptFloorName = "floor-goredis-ours-gcra-script"

// rowKeys are the redisKeys keys a row decides on, as BenchmarkRedis names
// them.
func rowKeys(name string) []string {
	keys := make([]string, redisKeys)
	for i := range keys {
		keys[i] = "bench:" + name + ":" + strconv.Itoa(i)
	}
	return keys
}

// ourScriptFloor sends the very EVALSHA ratewarden's store sends for a GCRA
// decision of each key (recorded from the store beforehand, its arguments
// boxed once), as an IntCmd (an IntSliceCmd for a script that replies with
// an array) through go-redis's Process, and does
// nothing else: between it and the go-redis floor lies what the script and
// its longer call and reply cost; between it and ratewarden's go-redis row,
// what the store and its binding cost the client.
func ourScriptFloor() redisImpl {
	return redisImpl{ourScriptFloorName, func(tb testing.TB, c *redisClients) func() redisDecide {
		rec := &recordingBackend{}
		st, err := luascript.New(rec, luascript.WithLocalCache(0))
		require.NoError(tb, err)
		calls := map[string][]any{}
		for _, key := range rowKeys(ourScriptFloorName) {
			req := core.TakeRequest{Key: key, Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(redisRate)}, Cost: 1}
			_, err := st.Take(context.Background(), req)
			require.ErrorIs(tb, err, errRecorded)
			call := []any{"evalsha", rec.script.SHA1, len(rec.keys)}
			for _, a := range append(rec.keys, rec.args...) {
				call = append(call, a)
			}
			calls[key] = call
		}
		script := rec.script
		require.NoError(tb, c.rdb.ScriptLoad(context.Background(), script.Source).Err())
		return shared(func(ctx context.Context, key string) (bool, error) {
			call, ok := calls[key]
			if !ok {
				return false, fmt.Errorf("benchmarks: no call recorded for %q", key)
			}
			if script.IntegerReply { // one integer, negative for a denial
				cmd := goredis.NewIntCmd(ctx, call...)
				err := c.rdb.Process(ctx, cmd)
				return err == nil && cmd.Val() >= 0, err
			}
			cmd := goredis.NewIntSliceCmd(ctx, call...)
			err := c.rdb.Process(ctx, cmd)
			return err == nil && cmd.Val()[0] == 1, err
		})
	}}
}

// rotationRow is one row of the rotation, set up.
type rotationRow struct {
	name         string
	keys         []string
	perGoroutine func() redisDecide
	dps, xfloor  []float64
	allocs       []float64
}

func BenchmarkRedisRotation(b *testing.B) {
	srv := redistest.Start(b)
	c := newRedisClients(b, srv.Addr())
	byName := map[string]redisImpl{ourScriptFloorName: ourScriptFloor()}
	for _, im := range redisImpls() {
		byName[im.name] = im
	}
	rows := make([]*rotationRow, len(rotationRows))
	for i, name := range rotationRows {
		im, ok := byName[name]
		require.True(b, ok, "no row %s", name)
		rows[i] = &rotationRow{name: name, keys: rowKeys(name), perGoroutine: im.setup(b, c)}
	}
	for _, g := range []int{1, 64} {
		b.Run("g="+strconv.Itoa(g), func(b *testing.B) {
			for _, r := range rows {
				r.dps, r.xfloor, r.allocs = nil, nil, nil
			}
			for round := range b.N {
				floorDPS := 0.0
				dps := make(map[string]float64, len(rows))
				for k := range rows {
					r := rows[(round+k)%len(rows)]
					d, allocs, err := rotationSlotRun(g, r)
					if err != nil {
						b.Fatalf("%s: %v", r.name, err)
					}
					dps[r.name] = d
					r.dps, r.allocs = append(r.dps, d), append(r.allocs, allocs)
					if r.name == rotationFloor {
						floorDPS = d
					}
				}
				for _, r := range rows {
					r.xfloor = append(r.xfloor, dps[r.name]/floorDPS)
				}
			}
			for _, r := range rows {
				b.ReportMetric(median(r.dps), "dec/s:"+r.name)
				b.ReportMetric(median(r.xfloor), "xfloor:"+r.name)
				b.ReportMetric(median(r.allocs), "allocs/dec:"+r.name)
			}
		})
	}
}

// rotationSlotRun makes rotationSlot decisions of r from g goroutines and
// returns the decisions per second and the process's allocations per
// decision. Every decision must succeed.
func rotationSlotRun(g int, r *rotationRow) (dps, allocs float64, err error) {
	ctx := context.Background()
	var left atomic.Int64
	left.Store(rotationSlot)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range g {
		decide := r.perGoroutine()
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := i * 7919; left.Add(-1) >= 0; k++ {
				if _, err := decide(ctx, r.keys[k%len(r.keys)]); err != nil {
					first := err // on the heap only when a decision fails
					failed.CompareAndSwap(nil, &first)
				}
			}
		}()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&after)
	if p := failed.Load(); p != nil {
		return 0, 0, *p
	}
	return rotationSlot / elapsed.Seconds(), float64(after.Mallocs-before.Mallocs) / rotationSlot, nil
}

// median returns the median of xs (which it sorts), or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
