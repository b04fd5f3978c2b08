// Command ratewarden is the operator's tool of the rate-limit rules kept in
// Redis (package rules): it checks a rules file, compares it with the rules
// Redis holds, pushes it (every instance that watches the rules with
// rules.WatchRedis loads it at once), shows what Redis holds, and shows and
// resets a client's counters under a policy.
//
// Install it with
//
//	go install github.com/ratewarden/ratewarden/cmd/ratewarden@latest
//
// and run it as
//
//	ratewarden rules validate rules.yaml
//	ratewarden rules diff rules.yaml --redis redis://10.0.0.5:6379/0
//	ratewarden rules push rules.yaml --redis redis-cluster://10.0.0.5:7000,10.0.0.6:7000
//	RATEWARDEN_REDIS=rediss://app@redis.example.com:6380/0 ratewarden rules show --redis-password-file /run/secrets/redis-password
//	ratewarden rules show > rules-in-redis.yaml
//	ratewarden key show api/paid key-of-a-partner
//	ratewarden key reset login 203.0.113.9
//
// Usage:
//
//	ratewarden COMMAND [flags] [arguments]
//
//	Commands:
//	  rules validate FILE          check a rules file
//	  rules diff FILE              compare a rules file with the rules in Redis
//	  rules push FILE              validate a rules file and store it in Redis
//	  rules show                   print the rules in Redis
//	  key show POLICY KEY          show a key's counters under a policy
//	  key reset POLICY KEY         forget a key's counters under a policy
//
//	Flags of the commands that talk to Redis, anywhere after the command:
//	  --redis URL       the Redis (default $RATEWARDEN_REDIS, or redis://127.0.0.1:6379):
//	                      redis://[user:password@]host:port[/db][?options]
//	                      rediss://...           the same over TLS
//	                      redis-cluster://[user:password@]host:port,host:port[?options]
//	                      rediss-cluster://...   a cluster over TLS
//	                      redis-sentinel://[user:password@]host:port,host:port/master[/db][?options]
//	                      rediss-sentinel://...  Sentinels and their master over TLS
//	                    options are go-redis's: dial_timeout=2s, read_timeout, write_timeout,
//	                    pool_size, max_retries, client_name, protocol, db, ...; sentinel_auth=true
//	                    sends the user and password to the Sentinels too. Percent-encode a
//	                    password's special characters (%40 for @).
//	  --redis-password-file FILE
//	                    the password, when the URL has none: the file's content, without
//	                    its trailing newline (default $RATEWARDEN_REDIS_PASSWORD_FILE)
//	  --redis-ca FILE   the PEM CA that signed the server's certificate, for a private CA
//	                    (default $RATEWARDEN_REDIS_CA; otherwise the system's roots). The
//	                    certificate and its name are always checked.
//	  --prefix PREFIX   the key prefix of the Redis store and the rules (default rw:)
//	  --timeout D       bound on each Redis call (default 5s)
//
//	Keep the password off the command line: put the user in the URL and the
//	password in $RATEWARDEN_REDIS_PASSWORD, or in a file (a mounted secret) named
//	by --redis-password-file; a password in the URL wins over both, and the file
//	over the variable. The tool never prints a password: messages show it as
//	xxxxx.
//
// Exit status: 0 done, 1 problems found (an invalid file, a refused push, no
// such policy, Redis failing), 2 bad usage (an unknown command, a missing
// argument, a bad flag or URL); rules diff exits as diff(1) does: 0 the same,
// 1 different, 2 trouble (an invalid file, Redis failing) or bad usage.
// Results go to standard output, messages to standard error; the tool, each
// group (ratewarden rules -h, ratewarden key -h) and every command take -h.
//
// A document is identified by its version and its digest (the SHA-256 of
// its canonical form: the same rules in YAML or JSON have one digest; the
// tool prints its first 12 hex digits). A push stores the document, its
// version and its digest in one hash, <prefix>{rules}:doc, and announces them
// on <prefix>{rules}:announce, in one script that refuses an older version,
// and the stored version with another digest; the very rules Redis holds,
// pushed again, are announced again and change nothing (exit 0).
// docs/rules.md ("Identity" and "Rules in Redis") describes the rules and the
// layout. --prefix must be the prefix the instances'
// Redis store and rules watcher use (luascript.WithPrefix,
// rules.WithRedisPrefix), so that key show and key reset find the counters
// the instances keep.
package main
