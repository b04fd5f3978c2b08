package redisstore

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// dropProxy forwards TCP between a client and Redis and can be told to lose
// exactly one reply: once drop is set, the first connection that carries an
// EVALSHA is closed when Redis's reply comes, instead of passing it on. (Any
// other command, such as the handshake of a connection the client opens
// meanwhile, passes: losing its reply would only make the client dial again.)
type dropProxy struct {
	ln   net.Listener
	to   string
	drop atomic.Bool
	wg   sync.WaitGroup
}

func startDropProxy(t *testing.T, to string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &dropProxy{ln: ln, to: to}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *dropProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		return
	}
	defer up.Close()
	var cut atomic.Bool // this connection carried the EVALSHA whose reply is lost
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 && bytes.Contains(bytes.ToLower(buf[:n]), []byte("evalsha")) && p.drop.CompareAndSwap(true, false) {
				cut.Store(true)
			}
			if n > 0 {
				if _, werr := up.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		_ = up.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 && cut.Load() {
			return // the reply is lost: the client sees its connection close
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// testLostReply: when the reply to a decision is lost, the store reports an
// error and the script has run exactly once: go-redis's retry (MaxRetries
// defaults to 3) must not send it again and count the request twice.
func testLostReply(t *testing.T, addr string) {
	p := startDropProxy(t, addr)
	client := redis.NewClient(&redis.Options{Addr: p.ln.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: 5})
	t.Cleanup(func() { _ = client.Close() })
	st := newStore(t, client, luascript.WithLocalCache(0))
	req := core.TakeRequest{Key: "lost", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerHour(10)}, Cost: 1}
	d, err := st.Take(bg, req)
	require.NoError(t, err)
	require.Equal(t, int64(9), d.Remaining)

	before := commandCalls(t, addr)
	p.drop.Store(true)
	_, err = st.Take(bg, req)
	require.ErrorIs(t, err, luascript.ErrRedis)
	calls := diffCalls(before, commandCalls(t, addr))
	assert.Equal(t, int64(1), calls["evalsha"], "the script ran once and was not replayed: %v", calls)

	d, err = st.Take(bg, req)
	require.NoError(t, err)
	assert.Equal(t, int64(7), d.Remaining, "the lost request was counted once")
}

// TestRestart: Redis restarts (keys and scripts gone) in the middle of a run:
// no panic, a few errors at most, then decisions resume and the script is
// loaded again.
func TestRestart(t *testing.T) {
	srv := redistest.StartLocal(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client, luascript.WithLocalCache(0))
	req := core.TakeRequest{Key: "r", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerHour(100)}, Cost: 1}
	for range 5 {
		_, err := st.Take(bg, req)
		require.NoError(t, err)
	}
	srv.Restart(t)
	var errs int
	var d core.Decision
	for range 20 {
		ctx, cancel := context.WithTimeout(bg, time.Second)
		var err error
		require.NotPanics(t, func() { d, err = st.Take(ctx, req) })
		cancel()
		if err == nil {
			break
		}
		require.ErrorIs(t, err, luascript.ErrRedis)
		errs++
	}
	t.Logf("errors after the restart: %d", errs)
	require.Less(t, errs, 20, "decisions resume")
	assert.True(t, d.Allowed)
	assert.Equal(t, int64(99), d.Remaining, "the restarted Redis starts empty")
	exists, err := client.ScriptExists(bg, luascript.Scripts()[3].SHA1).Result()
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, exists, "the sliding log's script is loaded again")
}

// TestStopped: with Redis gone (killed) or hung (paused), every call returns an
// error wrapping luascript.ErrRedis within its context's deadline, and no goroutine is
// left behind.
func TestStopped(t *testing.T) {
	for _, mode := range []string{"killed", "paused"} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.StartLocal(t)
			client := newClient(t, srv.Addr())
			st := newStore(t, client)
			req := core.TakeRequest{Key: "s", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1000)}, Cost: 1}
			_, err := st.Take(bg, req)
			require.NoError(t, err)
			base := runtime.NumGoroutine()
			if mode == "killed" {
				srv.Stop(t)
			} else {
				srv.Pause(t)
				defer srv.Resume(t)
			}
			late, failed := hammer(st, req)
			assert.Equal(t, int64(0), late, "calls that outlived their deadline")
			assert.Equal(t, int64(96), failed, "calls that failed with luascript.ErrRedis")
			settled := false
			for range 100 {
				if runtime.NumGoroutine() <= base+2 {
					settled = true
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			assert.True(t, settled, "goroutines: %d before, %d after", base, runtime.NumGoroutine())
			if mode == "paused" {
				srv.Resume(t)
				var d core.Decision
				require.Eventually(t, func() bool {
					ctx, cancel := context.WithTimeout(bg, time.Second)
					defer cancel()
					d, err = st.Take(ctx, req)
					return err == nil
				}, 5*time.Second, 10*time.Millisecond)
				assert.True(t, d.Allowed, "decisions resume")
			}
		})
	}
}

func TestTakeRejectsBadRequestsWithoutRedis(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer client.Close()
	st, err := New(client, luascript.WithCallerClock())
	require.NoError(t, err)
	good := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: storetest.Start}
	tests := []struct {
		name   string
		mutate func(*core.TakeRequest)
		want   error
	}{
		{"refund at zero time", func(r *core.TakeRequest) { r.Cost, r.Now = -1, time.Time{} }, core.ErrClock},
		{"no limits", func(r *core.TakeRequest) { r.Limits = nil }, core.ErrInvalidLimit},
		{"bad algorithm", func(r *core.TakeRequest) { r.Algorithm = 42 }, core.ErrInvalidAlgorithm},
		{"zero time", func(r *core.TakeRequest) { r.Now = time.Time{} }, core.ErrClock},
		{"unreachable redis", func(r *core.TakeRequest) {}, luascript.ErrRedis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := good
			tt.mutate(&req)
			d, err := st.Take(bg, req)
			require.ErrorIs(t, err, tt.want)
			assert.False(t, d.Allowed)
		})
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = st.Take(ctx, good)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, luascript.ErrRedis)
}

// hammer has 32 goroutines call st.Take 3 times each, with a deadline of
// 200 ms, and counts the calls that outlived it by more than a loaded CI
// machine explains (go-redis alone would wait ReadTimeout, 3 s, per try), and
// those that failed with luascript.ErrRedis.
func hammer(st core.Store, req core.TakeRequest) (late, failed int64) {
	const deadline = 200 * time.Millisecond
	var wg sync.WaitGroup
	var nlate, nfailed atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				ctx, cancel := context.WithTimeout(bg, deadline)
				start := time.Now()
				_, err := st.Take(ctx, req)
				cancel()
				if time.Since(start) > deadline+700*time.Millisecond {
					nlate.Add(1)
				}
				if errors.Is(err, luascript.ErrRedis) {
					nfailed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return nlate.Load(), nfailed.Load()
}
