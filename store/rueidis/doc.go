// Package rueidisstore binds ratewarden's Redis store (package store/luascript,
// whose doc says what the store does: one atomic round trip per decision, its
// time, keys, failures and local cache of denials) to rueidis, whose client
// pipelines concurrent calls on a few shared connections: under many
// concurrent requests it decides more per second than a connection-pool
// client. New takes any rueidis.Client (a single node, Sentinel or Redis
// Cluster) and returns a *luascript.Store, which decides exactly as the
// go-redis binding's (store/redis) on the same keys, so the two can share a
// Redis:
//
//	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
//	store, err := rueidisstore.New(client)
//
// A managed Redis (a password, an ACL user, TLS) is reached with rueidis's
// own options: rueidis.ParseURL reads redis://user:password@host:port/db and
// rediss:// (TLS 1.2 or later, the server's name checked), and
// ClientOption.Password and TLSConfig.RootCAs take a password kept in a file
// and a private CA (see the managed-Redis example). rueidis.ParseURL's
// errors may quote the URL it was given, password included: do not log them
// as they are. The go-redis binding's ParseURL (store/redis), which the
// operator's tool and the example servers use, never does.
//
// A script call is never sent twice after a lost reply (package luascript,
// "Failures"), so it is built without rueidis's retryable flag, and rueidis
// sends it once; the store retries it itself, up to 3 times with a backoff
// from 8 ms (go-redis's defaults) within the context, when the error proves
// the script did not run: a refused connection, or a CLUSTERDOWN, TRYAGAIN,
// LOADING or MASTERDOWN reply. rueidis reloads a cluster's slot map after a
// failed call on its own.
//
// NewRulesBackend binds the same client to package rules, for rules kept in
// Redis (rules.WatchRedis, rules.PushRules); rueidis renews a broken
// subscription itself.
package rueidisstore
