package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// A script call is never sent twice by go-redis (see scriptCmd), so go-redis
// neither retries it nor, on a cluster client, does what its retries do for
// other commands: mark the node failing and learn the new slot map. A
// cluster client whose master was killed would send the slot's script
// calls to the dead address until its next periodic reload of the slot map
// (ClusterOptions.ClusterStateReloadInterval, 60 s by default), long after
// the cluster promoted the replica. The store does both itself, for the
// errors that prove the script did not run.

// notRunReplies are the error replies with which Redis refuses to run a
// command at all: the cluster is down (a master failed and its replica is
// not promoted yet), the keys are being moved between nodes, the node is
// loading its data, or a replica lost its master.
var notRunReplies = []string{"CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN"}

// notRun reports whether err proves that the call did not run: the
// connection was never made, or Redis refused the command before running
// it.
func notRun(err error) bool {
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	for _, prefix := range notRunReplies {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}

// retry reports whether a call that failed with err on its attempt (0 for
// the first) is sent again, once the client's retry backoff has passed:
// only when err proves the call did not run, at most as many times as the
// client retries a command (a cluster client's MaxRedirects, the others'
// MaxRetries), and before ctx ends. On a cluster client, any error but an
// error reply of the script (a connection lost or refused, a refusal to
// run) also asks the client to reload its slot map in the background.
func (b backend) retry(ctx context.Context, err error, attempt int) bool {
	var retries int
	var minBackoff, maxBackoff time.Duration
	switch c := b.client.(type) {
	case *redis.ClusterClient:
		if _, isReply := errors.AsType[redis.Error](err); !isReply || notRun(err) {
			c.ReloadState(ctx)
		}
		o := c.Options()
		retries, minBackoff, maxBackoff = o.MaxRedirects, o.MinRetryBackoff, o.MaxRetryBackoff
	case *redis.Client:
		o := c.Options()
		retries, minBackoff, maxBackoff = o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff
	case *redis.Ring:
		o := c.Options()
		retries, minBackoff, maxBackoff = o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff
	}
	if attempt >= retries || !notRun(err) {
		return false
	}
	t := time.NewTimer(backoff(attempt, minBackoff, maxBackoff))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is the wait before retry attempt+1, as go-redis waits: from
// minBackoff, doubling per attempt, with jitter, at most maxBackoff.
func backoff(attempt int, minBackoff, maxBackoff time.Duration) time.Duration {
	if minBackoff <= 0 {
		return 0
	}
	d := minBackoff << min(attempt, 20)
	d = minBackoff + rand.N(d)
	if d > maxBackoff && maxBackoff > 0 {
		d = maxBackoff
	}
	return d
}
