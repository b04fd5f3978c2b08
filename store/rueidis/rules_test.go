package rueidisstore

import (
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// rulesTargets start a single server and a cluster, and return a client of
// it and its nodes' addresses.
var rulesTargets = map[string]func(t *testing.T) (rueidis.Client, []string){
	"single": func(t *testing.T) (rueidis.Client, []string) {
		a := redistest.Start(t).Addr()
		return newClient(t, a), []string{a}
	},
	"cluster": func(t *testing.T) (rueidis.Client, []string) {
		addrs := redistest.StartCluster(t)
		return newClient(t, addrs...), addrs
	},
}

// TestRulesBackend runs the checks every binding's rules backend shares (see
// package redistest) on a single server and a cluster: Eval runs an unseen
// script through EVAL, then EVALSHA, and turns every reply but an array of
// strings into an error; Subscribe confirms and delivers what any node
// publishes. When the server kills the subscriber, rueidis subscribes again
// on its own and Subscribe says so (subscribed is called again), so the
// watcher reads what it may have missed; an ended context ends it.
func TestRulesBackend(t *testing.T) {
	for name, target := range rulesTargets {
		t.Run(name, func(t *testing.T) {
			client, addrs := target(t)
			b, err := NewRulesBackend(client)
			require.NoError(t, err)
			t.Run("Eval", func(t *testing.T) { redistest.RulesBackendEval(t, b) })
			t.Run("Subscribe", func(t *testing.T) {
				redistest.RulesBackendSubscribe(t, b, addrs, redistest.SubscriptionRenewed)
			})
		})
	}
}

func TestNewRulesBackendBadClient(t *testing.T) {
	_, err := NewRulesBackend(nil)
	assert.ErrorIs(t, err, ErrClient)
}
