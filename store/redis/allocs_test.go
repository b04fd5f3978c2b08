//go:build !race

package redisstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestTakeAllocs pins what a decision allocates through go-redis: the store's
// frame and key (luascript's TestTakeAllocs), the call's argument slice and
// command, and the three go-redis's pool spends checking a connection's
// health when it lends it (a peek at the socket). It was 11 before the reply
// was read as integers and the key went unboxed, and 8 while a decision of
// one limit replied with an array (read into a []int64) instead of one
// integer.
func TestTakeAllocs(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, newClient(t, srv.Addr()), luascript.WithLocalCache(0))
	req := core.TakeRequest{Key: "allocs", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1_000_000)}, Cost: 1}
	_, err := st.Take(bg, req) // loads the script
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := st.Take(bg, req); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, 7.0, allocs)
}
