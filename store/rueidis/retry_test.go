package rueidisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestRetryNotRun: a script call whose error proves it did not run (a
// TRYAGAIN reply, which a script can send to stand in for a cluster's) is
// sent again, notRunRetries times, and not past the context's end; any
// other error is returned at once.
func TestRetryNotRun(t *testing.T) {
	client := newClient(t, redistest.StartLocal(t).Addr())
	script := func(body string) *luascript.Script {
		sha, src := redistest.UnseenScript(body)
		require.NoError(t, client.Do(context.Background(), client.B().ScriptLoad().Script(src).Build()).Error())
		return &luascript.Script{Source: src, SHA1: sha}
	}
	tryAgain := script("return redis.error_reply('TRYAGAIN Multiple keys request during rehashing of slot')")
	other := script("return redis.error_reply('ERR not a refusal')")
	for _, tt := range []struct {
		name string
		sc   *luascript.Script
		want int64 // EVALSHA calls
	}{
		{"not run, retried", tryAgain, 1 + notRunRetries},
		{"an error of the script", other, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := commandCalls(t, client)
			_, err := backend{client}.Eval(context.Background(), tt.sc, []string{"{k}"}, nil, nil)
			require.Error(t, err)
			assert.Equal(t, tt.want, diffCalls(before, commandCalls(t, client))["evalsha"])
		})
	}
	t.Run("context ends during the backoff", func(t *testing.T) {
		before := commandCalls(t, client)
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_, err := backend{client}.Eval(ctx, tryAgain, []string{"{k}"}, nil, nil)
		require.Error(t, err)
		assert.LessOrEqual(t, diffCalls(before, commandCalls(t, client))["evalsha"], int64(1), "no call after the context ended")
	})
}

// TestNotRun: the error replies that refuse a command (sent here by a
// script, as a node would send them) and a refused connection prove the
// call did not run; an error of the script, a lost connection, a timeout
// and errors that are not replies do not.
func TestNotRun(t *testing.T) {
	client := newClient(t, redistest.Start(t).Addr())
	reply := func(msg string) error {
		return client.Do(context.Background(), client.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(msg).Build()).Error()
	}
	for _, prefix := range []string{"CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN"} {
		assert.True(t, notRun(reply(prefix+" refused")), prefix)
	}
	for err, want := range map[error]bool{
		reply("ERR something else"):                                     false,
		reply("NOSCRIPT No matching script"):                            false,
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}: true,
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}:   false, // the call may have run
		io.EOF:                      false,
		context.DeadlineExceeded:    false,
		rueidis.Nil:                 false,
		errors.New("CLUSTERDOWN x"): false, // not a reply
	} {
		assert.Equal(t, want, notRun(err), "%v", err)
	}
}

func TestBackoff(t *testing.T) {
	for attempt := range 8 {
		d := backoff(attempt)
		assert.GreaterOrEqual(t, d, notRunMinBackoff)
		assert.LessOrEqual(t, d, min(notRunMaxBackoff, notRunMinBackoff+notRunMinBackoff<<attempt))
	}
	assert.Equal(t, notRunMaxBackoff, backoff(60), "a large attempt stays at the cap")
}
