// Package redistest starts real Redis servers for tests: a single redis-server
// on a free loopback port, a three-master Redis Cluster, or a server watched by
// a Redis Sentinel, each in its own
// temporary directory and stopped when the test ends. It returns plain
// addresses, so tests of any client (go-redis, rueidis) and benchmarks can use
// it.
//
// StartClusterWithReplicas starts a cluster of three masters, each with a
// replica, for tests of what a client sees while a master goes: its Failover
// moves a key's slot to the replica with CLUSTER FAILOVER (coordinated,
// nothing acknowledged lost), KillMaster kills the key's master and waits
// for the cluster to promote its replica (the writes of the last replication
// lag may be lost), and FlushScripts empties every node's script cache at
// once.
//
// StartSecure starts a server protected as a managed Redis is: a password
// (requirepass), an ACL user, TLS with a certificate signed by a CA made at
// run time (NewTestCA), or all of them; its CAFile and ClientTLS give what a
// client trusts, and Do talks to it through its protection.
//
// When the environment names a server (REDIS_URL for a single node,
// REDIS_CLUSTER_ADDRS, comma-separated, for a cluster), Start and StartCluster
// return it instead of starting one; tests then share it, so they should use
// keys of their own (a random prefix). Tests that stop or restart the server use
// StartLocal, which always starts a process.
//
// When redis-server is not installed, the test is skipped with a hint to
// install it (Debian: apt-get install redis-server), except when CI=true, where
// it fails: CI never skips the Redis tests.
//
// Backend, CacheMatchesRedis, CacheFlood and Reset are checks every Redis
// binding (store/redis, store/rueidis, or a third party's) runs through its own
// client: Backend checks the one method a binding implements, and the others
// what lives in store/luascript (the local cache of denials and Reset) through
// it. RulesBackendChecks checks a binding's backend of the rules kept
// in Redis (its NewRulesBackend) through RulesBackend, the two methods of
// rules.RedisBackend.
package redistest
