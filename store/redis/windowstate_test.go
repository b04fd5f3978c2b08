package redisstore

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// A window's state is one integer when it fits below 2^53 and text when it
// does not; both read back exactly, and a limit moves from one form to the
// other as its window index grows. At 999,999 per second the integer of the
// window starting at second 9006 lies just below 2^53 (9006 x 10^12 + ...);
// that of second 9007 would not fit. Every decision equals the reference's.
func TestWindowStateForms(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	limit := core.Every(999_999, time.Second)
	sec := func(s, us int64) time.Time { return time.UnixMicro(s*1_000_000 + us) }
	steps := []struct {
		at      time.Time
		cost    int64
		integer bool // the state written is one integer
	}{
		{sec(9006, 0), 999_000, true},
		{sec(9006, 400_000), 999, true},
		{sec(9006, 500_000), 1, false},   // denied: the state stays
		{sec(9006, 900_000), -500, true}, // a refund
		{sec(9007, 100_000), 300, false},
		{sec(9007, 200_000), 499_000, false},
		{sec(9008, 999_999), 7, false},
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, client, luascript.WithCallerClock(), luascript.WithLocalCache(0))
			ref := storetest.NewReference()
			var admitted time.Time
			for i, s := range steps {
				req := core.TakeRequest{Key: "forms", Algorithm: alg, Limits: []core.Limit{limit}, Cost: s.cost, Now: s.at}
				if s.cost < 0 {
					req.Admitted = admitted
				}
				want, err := ref.Take(bg, req)
				require.NoError(t, err)
				got, err := st.Take(bg, req)
				require.NoError(t, err, "step %d", i)
				require.Equal(t, want, got, "step %d", i)
				if got.Allowed && s.cost > 0 {
					admitted = s.at
				}
				keys, err := st.Keys(req)
				require.NoError(t, err)
				v, err := client.Get(bg, keys[0]).Result()
				require.NoError(t, err, "step %d", i)
				_, perr := strconv.ParseInt(v, 10, 64)
				if i == 2 {
					continue // a denial writes nothing: the state is step 1's
				}
				assert.Equal(t, s.integer, perr == nil, "step %d: state %q", i, v)
				assert.Equal(t, !s.integer, strings.Count(v, " ") == 2, "step %d: state %q", i, v)
			}
		})
	}
}

// A small limit's state is an integer, which Redis stores as one
// (OBJECT ENCODING int); a state written as text is still read, and a state
// that is neither fails the call without being overwritten.
func TestWindowStateIntegerAndText(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			st := newStore(t, client, luascript.WithCallerClock(), luascript.WithLocalCache(0))
			req := core.TakeRequest{Key: "k", Algorithm: alg, Limits: []core.Limit{core.PerHour(100)}, Cost: 3, Now: storetest.Start}
			d, err := st.Take(bg, req)
			require.NoError(t, err)
			require.Equal(t, int64(97), d.Remaining)
			keys, err := st.Keys(req)
			require.NoError(t, err)
			enc, err := client.ObjectEncoding(bg, keys[0]).Result()
			require.NoError(t, err)
			assert.Equal(t, "int", enc)

			hour := time.Hour.Microseconds()
			start := storetest.Start.UnixMicro() / hour * hour
			require.NoError(t, client.Set(bg, keys[0], strconv.FormatInt(start, 10)+" 40 0", time.Hour).Err())
			peek := req
			peek.Cost = 0
			d, err = st.Take(bg, peek)
			require.NoError(t, err)
			assert.Equal(t, int64(60), d.Remaining, "the text state is read")

			for _, bad := range []string{"-5", "1.5", "12345678901234567", "1 2", "x"} {
				require.NoError(t, client.Set(bg, keys[0], bad, time.Hour).Err())
				_, err = st.Take(bg, req)
				require.ErrorIs(t, err, luascript.ErrRedis, bad)
				assert.ErrorContains(t, err, "malformed state", bad)
				v, err := client.Get(bg, keys[0]).Result()
				require.NoError(t, err)
				assert.Equal(t, bad, v, "a malformed state is left for the operator to see")
			}
		})
	}
}

// Redis's memory per key (MEMORY USAGE) is at most what redis_rate's key for
// the same client costs, for every algorithm but the sliding log (a list):
// redis_rate v10 writes "rate:" + the key, holding a float's text such as
// "312254264.318452". The state is an integer, which Redis keeps in the
// object header (OBJECT ENCODING int).
func TestMemoryPerKeyAtMostRedisRates(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st, err := New(client) // the default prefix
	require.NoError(t, err)
	clients := []string{"user:1234", "203.0.113.7", "2001:db8:1234:5678::/64", "0123456789abcdef0123456789abcdef"}
	for _, alg := range core.Algorithms() {
		if alg == core.SlidingLog {
			continue
		}
		for _, key := range clients {
			t.Run(alg.String()+"/"+key, func(t *testing.T) {
				req := core.TakeRequest{Key: key, Algorithm: alg, Limits: []core.Limit{core.PerHour(100)}, Cost: 1}
				d, err := st.Take(bg, req)
				require.NoError(t, err)
				require.True(t, d.Allowed)
				keys, err := st.Keys(req)
				require.NoError(t, err)
				t.Cleanup(func() { client.Del(bg, keys...) })
				enc, err := client.ObjectEncoding(bg, keys[0]).Result()
				require.NoError(t, err)
				assert.Equal(t, "int", enc)
				ours, err := client.MemoryUsage(bg, keys[0], 0).Result()
				require.NoError(t, err)

				theirs := "rate:" + key
				require.NoError(t, client.Set(bg, theirs, "312254264.318452", time.Hour).Err())
				t.Cleanup(func() { client.Del(bg, theirs) })
				want, err := client.MemoryUsage(bg, theirs, 0).Result()
				require.NoError(t, err)
				assert.LessOrEqual(t, ours, want, "%s costs %d B, redis_rate's %s %d B", keys[0], ours, theirs, want)
			})
		}
	}
}
