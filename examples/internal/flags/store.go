package flags

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// warmUpTimeout bounds the start-up round trips of a Redis client.
const warmUpTimeout = 5 * time.Second

// newStore makes the store -store names, and what to close when done. A Redis
// client is warmed up before the server takes requests (see warmUp); when
// Redis does not answer, a line on the error log says so and the server
// starts all the same, failing open or closed until Redis answers.
func (c *Config) newStore() (core.Store, io.Closer, error) {
	if c.Store == Memory {
		st, err := memory.New()
		if err != nil {
			return nil, nil, err
		}
		return st, st, nil
	}
	client := redis.NewUniversalClient(c.RedisOptions)
	st, err := redisstore.New(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), warmUpTimeout)
	defer cancel()
	if err := warmUp(ctx, client); err != nil {
		fmt.Fprintf(c.errorWriter(), "rate limiter: redis did not answer at start (failing %s until it does): %v\n", c.failMode(), redisstore.ExplainError(err))
	}
	return st, follow(st, client), nil
}

// follow runs st.FollowResets until the returned closer is closed, so that a
// reset or refund on any instance (ratewarden key reset among them) drops
// this server's cached denials of the key at once; closing it stops that,
// then closes client.
func follow(st *luascript.Store, client io.Closer) io.Closer {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = st.FollowResets(ctx) // ends with ctx; a lost subscription is renewed inside
	}()
	return closerFunc(func() error {
		cancel()
		<-done
		return client.Close()
	})
}

// closerFunc is a function as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// warmUp pings the server, or every master of a cluster, so that the client's
// start-up work is done before the first request: a fresh go-redis client
// loads the cluster's slot map and the server's command table and dials on its
// first commands, which takes a loaded machine longer than the policy's store
// timeout (httplimit.DefaultStoreTimeout). Without it, the first burst of
// requests on a cold cluster client failed open by the dozen.
func warmUp(ctx context.Context, client redis.UniversalClient) error {
	if cc, ok := client.(*redis.ClusterClient); ok {
		err := cc.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error {
			return shard.Ping(ctx).Err()
		})
		if err != nil {
			return err
		}
	}
	return client.Ping(ctx).Err() // through the cluster's routing too
}

// errorWriter is where the limiter's errors go: ErrorLog, or os.Stderr.
func (c *Config) errorWriter() io.Writer {
	if c.ErrorLog != nil {
		return c.ErrorLog
	}
	return os.Stderr
}
