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

// A window's state is the text "I N P D": the window's index, its count, the
// previous count and the period it was written under. It reads back
// exactly, at any window index (at 999,999 per second, the windows of seconds
// 9006 to 9008, whose packing in one double would not fit), and a state
// that is not of that form fails the call without being overwritten. Every
// decision equals the reference's.
func TestWindowStateForms(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	limit := core.Every(999_999, time.Second)
	sec := func(s, us int64) time.Time { return time.UnixMicro(s*1_000_000 + us) }
	steps := []struct {
		at   time.Time
		cost int64
	}{
		{sec(9006, 0), 999_000},
		{sec(9006, 400_000), 999},
		{sec(9006, 500_000), 1}, // denied: the state stays
		{sec(9006, 900_000), -500},
		{sec(9007, 100_000), 300},
		{sec(9007, 200_000), 499_000},
		{sec(9008, 999_999), 7},
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
				f := strings.Fields(v)
				require.Len(t, f, 4, "step %d: state %q", i, v)
				assert.Equal(t, "1000000", f[3], "step %d: the period it was written under", i)
			}
			keys, err := st.Keys(core.TakeRequest{Key: "forms", Algorithm: alg, Limits: []core.Limit{limit}})
			require.NoError(t, err)
			req := core.TakeRequest{Key: "forms", Algorithm: alg, Limits: []core.Limit{limit}, Cost: 1, Now: sec(9008, 999_999)}
			for _, bad := range []string{"-5", "1.5", "12345678901234567", "1 2 3", "1 2 3 x", "x"} {
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

// A meter's state is the text "T I": the instant it is full again and the
// emission interval it was written under, from which an edited limit
// re-expresses it; a state not of that form fails the call without being
// overwritten.
func TestMeterStateForm(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithCallerClock(), luascript.WithLocalCache(0))
	req := core.TakeRequest{Key: "m", Algorithm: core.GCRA, Limits: []core.Limit{core.PerHour(5)}, Cost: 3, Now: storetest.Start}
	_, err := st.Take(bg, req)
	require.NoError(t, err)
	keys, err := st.Keys(req)
	require.NoError(t, err)
	v, err := client.Get(bg, keys[0]).Result()
	require.NoError(t, err)
	want := strconv.FormatInt(storetest.Start.UnixMicro()+36*time.Minute.Microseconds(), 10) + " 720000000"
	assert.Equal(t, want, v, "3 of 5/h owe 36 minutes, at 12 minutes each")

	req.Limits, req.Cost = []core.Limit{core.PerHour(10)}, 0
	d, err := st.Take(bg, req)
	require.NoError(t, err)
	assert.Equal(t, int64(7), d.Remaining, "3 owed requests at the new 6 minutes")
	v, err = client.Get(bg, keys[0]).Result()
	require.NoError(t, err)
	want = strconv.FormatInt(storetest.Start.UnixMicro()+18*time.Minute.Microseconds(), 10) + " 360000000"
	assert.Equal(t, want, v, "re-expressed and written, even by a peek")

	for _, bad := range []string{"-5", "1.5", "12", "1 2 3", "1 x"} {
		require.NoError(t, client.Set(bg, keys[0], bad, time.Hour).Err())
		_, err = st.Take(bg, req)
		require.ErrorIs(t, err, luascript.ErrRedis, bad)
		assert.ErrorContains(t, err, "malformed state", bad)
	}
}

// Redis's memory per key (MEMORY USAGE) is at most 16 bytes more than what
// redis_rate's key for the same client costs, for every algorithm but the
// sliding log (a list): redis_rate v10 writes "rate:" + the key, holding a
// float's text such as "312254264.318452". Ours is short text (Redis keeps it
// in one allocation with the object header, OBJECT ENCODING embstr) holding
// the figure the state was written under, which a state must carry to
// survive an edit of its limit; the key names no figures.
func TestMemoryPerKeyNearRedisRates(t *testing.T) {
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
				assert.Equal(t, "embstr", enc)
				ours, err := client.MemoryUsage(bg, keys[0], 0).Result()
				require.NoError(t, err)

				theirs := "rate:" + key
				require.NoError(t, client.Set(bg, theirs, "312254264.318452", time.Hour).Err())
				t.Cleanup(func() { client.Del(bg, theirs) })
				want, err := client.MemoryUsage(bg, theirs, 0).Result()
				require.NoError(t, err)
				t.Logf("%s costs %d B, redis_rate's %s %d B", keys[0], ours, theirs, want)
				assert.LessOrEqual(t, ours, want+16, "%s costs %d B, redis_rate's %s %d B", keys[0], ours, theirs, want)
			})
		}
	}
}
