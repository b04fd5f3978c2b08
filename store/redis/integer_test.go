package redisstore

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestShortCallWritesState: a spend of 1 on one limit on Redis's clock (the
// call that leaves out the cost) writes the state in the text older instances
// read: "T I" for a meter, I its interval; "I N P D" for a window, D its
// period, N the count.
func TestShortCallWritesState(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithLocalCache(0))
	limit := core.PerMinute(3) // interval 20 s
	for alg, want := range map[core.Algorithm]*regexp.Regexp{
		core.TokenBucket:   regexp.MustCompile(`^\d{16} 20000000$`),
		core.LeakyBucket:   regexp.MustCompile(`^\d{16} 20000000$`),
		core.GCRA:          regexp.MustCompile(`^\d{16} 20000000$`),
		core.FixedWindow:   regexp.MustCompile(`^\d+ 2 0 60000000$`),
		core.SlidingWindow: regexp.MustCompile(`^\d+ 2 \d+ 60000000$`),
	} {
		req := core.TakeRequest{Key: "short", Algorithm: alg, Limits: []core.Limit{limit}, Cost: 1}
		for range 2 {
			d, err := st.Take(bg, req)
			require.NoError(t, err)
			require.True(t, d.Allowed, alg)
		}
		keys, err := st.Keys(req)
		require.NoError(t, err)
		v, err := client.Get(bg, keys[0]).Result()
		require.NoError(t, err)
		assert.Regexp(t, want, v, alg)
	}
}
