package rueidisstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestRulesBackend runs the checks every binding's rules backend shares (see
// redistest.RulesBackendChecks) on a single server and a cluster: Eval runs
// an unseen script through EVAL, then EVALSHA, and turns every reply but an
// array of strings into an error; Subscribe confirms and delivers what any
// node publishes. When the server kills the subscriber, rueidis subscribes
// again on its own and Subscribe says so (subscribed is called again), so
// the watcher reads what it may have missed; an ended context ends it.
func TestRulesBackend(t *testing.T) {
	redistest.RulesBackendChecks(t, func(t *testing.T, addrs []string, _ bool) redistest.RulesBackend {
		b, err := NewRulesBackend(newClient(t, addrs...)) // a client of a cluster's nodes finds the cluster
		require.NoError(t, err)
		return b
	}, redistest.SubscriptionRenewed)
}

func TestNewRulesBackendBadClient(t *testing.T) {
	_, err := NewRulesBackend(nil)
	assert.ErrorIs(t, err, ErrClient)
}
