package rueidisstore

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// TestRestart: a Redis restarted mid-run (state and scripts gone) makes calls
// fail with luascript.ErrRedis while it is down, never panics, and decisions resume on a
// fresh state once it is back, the script reloaded.
func TestRestart(t *testing.T) {
	srv := redistest.StartLocal(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithCallerClock(), luascript.WithLocalCache(0))
	req := core.TakeRequest{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(2)}, Cost: 1, Now: storetest.Start}
	ctx := context.Background()
	for range 2 {
		_, err := st.Take(ctx, req)
		require.NoError(t, err)
	}
	d, err := st.Take(ctx, req)
	require.NoError(t, err)
	require.False(t, d.Allowed)

	srv.Restart(t)
	// The client finds its connection broken at the first call after the
	// restart, and reconnects for the next one.
	var ok bool
	for range 50 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		d, err = st.Take(cctx, req)
		cancel()
		if err == nil {
			ok = true
			break
		}
		require.ErrorIs(t, err, luascript.ErrRedis)
	}
	require.True(t, ok, "no decision after the restart")
	assert.True(t, d.Allowed)
	assert.Equal(t, int64(1), d.Remaining)
}

// TestStopped: a Redis that stops answering costs a call its context's
// deadline, and the error wraps luascript.ErrRedis and the context's error.
func TestStopped(t *testing.T) {
	srv := redistest.StartLocal(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1}
	_, err := st.Take(context.Background(), req)
	require.NoError(t, err)

	srv.Pause(t)
	defer srv.Resume(t)
	const deadline = 200 * time.Millisecond
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			began := time.Now()
			_, err := st.Take(ctx, req)
			took := time.Since(began)
			assert.ErrorIs(t, err, luascript.ErrRedis)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, took, deadline+time.Second)
		}()
	}
	wg.Wait()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = st.Take(ctx, req)
	assert.ErrorIs(t, err, luascript.ErrRedis)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestLostReplyNotReplayed puts a proxy between the client and Redis that
// passes the script call on and then cuts the connection instead of passing
// the reply back: the store reports luascript.ErrRedis, and Redis ran the script exactly
// once (the request was counted once, not replayed).
func TestLostReplyNotReplayed(t *testing.T) {
	srv := redistest.Start(t)
	direct := newClient(t, srv.Addr())
	prefix := testPrefix()
	req := core.TakeRequest{Key: "lost", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(10)}, Cost: 1, Now: storetest.Start}
	ctx := context.Background()
	// Load the script, so the proxied call is one EVALSHA.
	_, err := newStore(t, direct, luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour)).Take(ctx, core.TakeRequest{Key: "other", Algorithm: req.Algorithm, Limits: req.Limits, Cost: 1, Now: req.Now})
	require.NoError(t, err)

	var cut atomic.Bool
	proxy := startProxy(t, srv.Addr(), &cut)
	client := newClient(t, proxy)
	st := newStore(t, client, luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour))
	before := commandCalls(t, direct)
	cut.Store(true)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = st.Take(cctx, req)
	require.ErrorIs(t, err, luascript.ErrRedis)
	assert.Equal(t, map[string]int64{"evalsha": 1}, roundTrips(diffCalls(before, commandCalls(t, direct))))

	d, err := newStore(t, direct, luascript.WithPrefix(prefix), luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour)).Take(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, int64(8), d.Remaining, "the lost call was counted once")
}

// startProxy forwards connections to addr. Once cut is set, a connection
// that carries an EVALSHA is closed when the server's reply comes, instead of
// passing the reply on.
func startProxy(t *testing.T, addr string, cut *atomic.Bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			var armed atomic.Bool
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer out.Close()
				pipe(out, in, func(b []byte) bool {
					if cut.Load() && bytes.Contains(bytes.ToLower(b), []byte("evalsha")) {
						armed.Store(true)
					}
					return true
				})
			}()
			go func() {
				defer wg.Done()
				defer in.Close()
				pipe(in, out, func([]byte) bool { return !armed.Load() })
			}()
		}
	}()
	return l.Addr().String()
}

// pipe copies from src to dst until either fails or pass, shown each chunk
// read, refuses one.
func pipe(dst io.Writer, src io.Reader, pass func([]byte) bool) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if n > 0 && !pass(buf[:n]) {
			return
		}
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
