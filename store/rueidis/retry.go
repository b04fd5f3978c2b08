package rueidisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// A script call is built without rueidis's retryable flag (see Eval), so
// rueidis sends it once: it refreshes a cluster's slot map after a failed
// call, but returns the error even when the call provably did not run. The
// store sends such calls again itself, as go-redis's defaults retry a
// command: up to notRunRetries times, after a backoff from 8 ms doubling
// per attempt (with jitter) up to 512 ms, and never past the context's end.
const (
	notRunRetries    = 3
	notRunMinBackoff = 8 * time.Millisecond
	notRunMaxBackoff = 512 * time.Millisecond
)

// notRun reports whether err proves that the call did not run: the
// connection was never made, or Redis refused the command before running
// it (the cluster is down while a failed master's replica is not promoted
// yet, the keys are being moved between nodes, the node is loading its
// data, a replica lost its master).
func notRun(err error) bool {
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	rerr, ok := rueidis.IsRedisErr(err)
	return ok && (rerr.IsClusterDown() || rerr.IsTryAgain() || rerr.IsLoading() || strings.HasPrefix(rerr.Error(), "MASTERDOWN"))
}

// retry reports whether a call that failed with err on its attempt (0 for
// the first) is sent again, once its backoff has passed: only when err
// proves the call did not run, at most notRunRetries times, and before ctx
// ends.
func retry(ctx context.Context, err error, attempt int) bool {
	if attempt >= notRunRetries || !notRun(err) {
		return false
	}
	t := time.NewTimer(backoff(attempt))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is the wait before retry attempt+1: from notRunMinBackoff,
// doubling per attempt, with jitter, at most notRunMaxBackoff.
func backoff(attempt int) time.Duration {
	d := notRunMinBackoff + rand.N(notRunMinBackoff<<min(attempt, 20))
	return min(d, notRunMaxBackoff)
}
