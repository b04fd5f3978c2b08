package redisstore

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestLeaseFailover runs redistest.LeaseFailover on go-redis cluster
// clients: a manual failover and a script flush during a leased run cost
// no decision and keep the bound; a killed master's decisions come back
// once its replica is promoted.
func TestLeaseFailover(t *testing.T) {
	redistest.LeaseFailover(t, testPrefix(), func(t *testing.T, addrs []string, opts ...luascript.Option) (core.Store, error) {
		return New(newClusterClient(t, addrs), opts...)
	})
}
