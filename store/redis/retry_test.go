package redisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestRetryNotRun: a script call whose error proves it did not run (a
// TRYAGAIN reply, which a script can send to stand in for a cluster's, or a
// refused connection) is sent again as many times as the client retries a
// command, after its backoff and before the context ends; any other error
// is returned at once.
func TestRetryNotRun(t *testing.T) {
	srv := redistest.StartLocal(t)
	script := func(body string) *luascript.Script {
		sha, src := redistest.UnseenScript(body)
		return &luascript.Script{Source: src, SHA1: sha}
	}
	tryAgain := script("return redis.error_reply('TRYAGAIN Multiple keys request during rehashing of slot')")
	other := script("return redis.error_reply('ERR not a refusal')")
	tests := []struct {
		name       string
		sc         *luascript.Script
		maxRetries int
		want       int // EVALSHA calls
	}{
		{"not run, retried", tryAgain, 2, 3},
		{"not run, retries off", tryAgain, -1, 1},
		{"an error of the script", other, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true,
				MaxRetries: tt.maxRetries, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond})
			t.Cleanup(func() { _ = client.Close() })
			require.NoError(t, client.ScriptLoad(context.Background(), tt.sc.Source).Err())
			hook := &countHook{}
			hook.reset()
			client.AddHook(hook)
			_, err := backend{client}.Eval(context.Background(), tt.sc, []string{"{k}"}, nil, nil)
			require.Error(t, err)
			assert.Equal(t, map[string]int{"evalsha": tt.want}, hook.counts())
		})
	}
	t.Run("context ends during the backoff", func(t *testing.T) {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, MinRetryBackoff: time.Hour, MaxRetryBackoff: time.Hour})
		t.Cleanup(func() { _ = client.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		began := time.Now()
		_, err := backend{client}.Eval(ctx, tryAgain, []string{"{k}"}, nil, nil)
		require.True(t, redis.HasErrorPrefix(err, "TRYAGAIN"), "%v", err)
		assert.Less(t, time.Since(began), 10*time.Second, "not the hour of the backoff")
	})
	t.Run("connection refused", func(t *testing.T) {
		down := redistest.StartLocal(t)
		down.Stop(t)
		client := redis.NewClient(&redis.Options{Addr: down.Addr(), ContextTimeoutEnabled: true, MaxRetries: 2, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond})
		t.Cleanup(func() { _ = client.Close() })
		hook := &countHook{}
		hook.reset()
		client.AddHook(hook)
		_, err := backend{client}.Eval(context.Background(), tryAgain, []string{"{k}"}, nil, nil)
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
		assert.Equal(t, map[string]int{"evalsha": 3}, hook.counts())
	})
}

// TestNotRun: the error replies that refuse a command (sent here by a
// script, as a node would send them) and a refused connection prove the
// call did not run; an error of the script, a lost connection, a timeout
// and errors that are not replies do not.
func TestNotRun(t *testing.T) {
	client := newClient(t, redistest.Start(t).Addr())
	reply := func(msg string) error {
		return client.Eval(context.Background(), "return redis.error_reply(ARGV[1])", nil, msg).Err()
	}
	for _, prefix := range notRunReplies {
		assert.True(t, notRun(reply(prefix+" refused")), prefix)
	}
	for err, want := range map[error]bool{
		reply("ERR something else"):                                     false,
		reply("NOSCRIPT No matching script"):                            false,
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}: true,
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}:   false, // the call may have run
		io.EOF:                      false,
		context.DeadlineExceeded:    false,
		errors.New("CLUSTERDOWN x"): false, // not a reply
	} {
		assert.Equal(t, want, notRun(err), "%v", err)
	}
}

func TestBackoff(t *testing.T) {
	for attempt := range 5 {
		d := backoff(attempt, 8*time.Millisecond, 100*time.Millisecond)
		assert.GreaterOrEqual(t, d, 8*time.Millisecond)
		assert.LessOrEqual(t, d, min(100*time.Millisecond, 8*time.Millisecond+8*time.Millisecond<<attempt))
	}
	assert.Zero(t, backoff(3, 0, time.Second), "no backoff")
	assert.Equal(t, time.Second, backoff(60, time.Second, time.Second), "a large attempt stays at the cap")
}
