package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// A window refund under several limits reads and checks every state before
// it writes any: a malformed state under the second limit fails the call and
// leaves the first limit's state as it was.
func TestRefundWritesNothingOnMalformedState(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, client, luascript.WithCallerClock())
			req := core.TakeRequest{Key: "k", Algorithm: alg, Limits: []core.Limit{core.PerMinute(5), core.PerHour(10)}, Cost: 2, Now: storetest.Start}
			d, err := st.Take(bg, req)
			require.NoError(t, err)
			require.True(t, d.Allowed)
			keys, err := st.Keys(req)
			require.NoError(t, err)
			first, err := client.Get(bg, keys[0]).Result()
			require.NoError(t, err)
			require.NoError(t, client.Set(bg, keys[1], "not a state", time.Hour).Err())

			refund := req
			refund.Cost, refund.Admitted = -1, storetest.Start
			_, err = st.Take(bg, refund)
			require.ErrorIs(t, err, luascript.ErrRedis)
			assert.ErrorContains(t, err, "malformed state")
			after, err := client.Get(bg, keys[0]).Result()
			require.NoError(t, err)
			assert.Equal(t, first, after, "the first limit's state is untouched")
		})
	}
}
