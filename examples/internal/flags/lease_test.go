package flags

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

func TestParseLease(t *testing.T) {
	srv := redistest.Start(t)
	c, err := Parse("ex", []string{"-store", "redis://" + srv.Addr(), "-limit", "100/s", "-lease", "20", "-lease-ttl", "50ms"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, int64(20), c.LeaseTokens)
	assert.Equal(t, 50*time.Millisecond, c.LeaseTTL)
	assert.Contains(t, c.String(), "hot clients lease up to 20 tokens for 50ms")
	st, closer, err := c.newStore()
	require.NoError(t, err)
	defer closer.Close()
	lim, err := core.NewLimiter(st, c.Algorithm, c.Limit, c.LimiterOptions()...)
	require.NoError(t, err)
	assert.Equal(t, core.TokenLease{Max: 20, TTL: 50 * time.Millisecond}, lim.TokenLease())

	c, err = Parse("ex", []string{"-lease", "0"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Zero(t, c.LeaseTokens, "0 is off")
	assert.Empty(t, c.leaseOptions())
}

func TestParseLeaseBad(t *testing.T) {
	redis := []string{"-store", "redis://127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"-lease", "-1"}, redis...), "token lease of -1 tokens"},
		{append([]string{"-lease", "11"}, redis...), "above the limit 10/s"},
		{append([]string{"-lease", "5", "-lease-ttl", "2s"}, redis...), "longer than the window of 10/s"},
		{append([]string{"-lease", "5", "-lease-ttl", "0s"}, redis...), "want both above 0"},
		{append([]string{"-lease", "5", "-algorithm", "sliding-log"}, redis...), "sliding log cannot be leased exactly"},
		{append([]string{"-lease", "5", "-algorithm", "leaky-bucket"}, redis...), "leaky bucket cannot be leased exactly"},
		{append([]string{"-lease", "5", "-burst", "3"}, redis...), "above the limit"},
		{[]string{"-lease", "5"}, "-lease needs a Redis -store"},
		{[]string{"-lease-ttl", "1s"}, "-lease-ttl goes with -lease N"},
		{[]string{"-lease", "five"}, `invalid value "five" for flag -lease`},
		{append([]string{"-lease", "5", "-rules", "../../rules.yaml"}, redis...), "-lease does not go with -rules"},
	} {
		_, err := Parse("ex", tc.args, &bytes.Buffer{})
		require.ErrorIs(t, err, errUsage, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
}

// -h names both flags.
func TestHelpNamesLease(t *testing.T) {
	var out bytes.Buffer
	_, err := Parse("ex", []string{"-h"}, &out)
	require.True(t, errors.Is(err, flag.ErrHelp))
	assert.Contains(t, out.String(), "-lease N")
	assert.Contains(t, out.String(), "-lease-ttl duration")
	assert.Contains(t, out.String(), "nor -block-for, -concurrency and -lease")
}

// Two servers sharing a client's key at 200 per hour with -lease 50 admit
// exactly 200 between them, each asked from 8 goroutines.
func TestLeaseTwoServersExact(t *testing.T) {
	srv := redistest.Start(t)
	for _, alg := range []string{"fixed-window", "sliding-window"} {
		var lims []*core.Limiter
		for range 2 {
			c, err := Parse("ex", []string{"-store", "redis://" + srv.Addr(), "-limit", "200/h", "-algorithm", alg, "-lease", "50"}, &bytes.Buffer{})
			require.NoError(t, err)
			st, closer, err := c.newStore()
			require.NoError(t, err)
			t.Cleanup(func() { closer.Close() })
			lim, err := core.NewLimiter(st, c.Algorithm, c.Limit, append(c.LimiterOptions(), core.WithNamespace(t.Name()+alg))...)
			require.NoError(t, err)
			lims = append(lims, lim)
		}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for _, lim := range lims {
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 100 {
						d, err := lim.Allow(context.Background(), "client")
						if assert.NoError(t, err) && d.Allowed {
							admitted.Add(1)
						}
					}
				}()
			}
		}
		wg.Wait()
		for _, lim := range lims { // what the two still hold
			for {
				d, err := lim.Allow(context.Background(), "client")
				require.NoError(t, err)
				if !d.Allowed {
					break
				}
				admitted.Add(1)
			}
		}
		assert.Equal(t, int64(200), admitted.Load(), alg)
		calls := lims[0].TokenLeaseStats().Calls + lims[1].TokenLeaseStats().Calls
		assert.Less(t, calls, int64(200), "%s: fewer Redis calls than admissions", alg)
	}
}
