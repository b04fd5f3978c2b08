package flags

import (
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// newStore makes the store -store names, and what to close when done.
func (c *Config) newStore() (core.Store, io.Closer, error) {
	var client redis.UniversalClient
	switch c.Store {
	case Redis:
		client = redis.NewClient(&redis.Options{Addr: c.RedisAddrs[0], DB: c.RedisDB, ContextTimeoutEnabled: true})
	case RedisCluster:
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.RedisAddrs, ContextTimeoutEnabled: true})
	default:
		st, err := memory.New()
		if err != nil {
			return nil, nil, err
		}
		return st, st, nil
	}
	st, err := redisstore.New(client)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	return st, client, nil
}
