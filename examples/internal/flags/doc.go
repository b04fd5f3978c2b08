// Package flags parses the flags every example server shares and builds from
// them what the servers need: the store (Setup.Store: memory, or Redis warmed
// up and following resets), with -rules a rules.Set kept in step with its
// file or with Redis, the options of the flags that are not the limit
// (Setup.Policy: tiers, fail mode, dry run, refunds, the error log and the
// metrics), the routes every server answers, a listener and the shutdown.
// The library lines an app copies stay in each server's main.go (newLimit):
//
//	lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
//	key, err := cfg.KeyFunc()
//	lim, opts, err := setup.Policy(lim)
//	mw, err := ginmw.New(lim, append(opts, httplimit.WithKey(key))...)
//
// and, with -rules, ginmw.Middleware(setup.Rules).
//
// The flags:
//
//	-addr            address to listen on (default :8080; 127.0.0.1:0 picks a free port)
//	-limit           RATE/PERIOD, e.g. 10/s, 100/m, 5/30s (default 10/s)
//	-burst           the burst, for token-bucket, leaky-bucket and gcra (default: the rate)
//	-algorithm       token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window, gcra
//	-key             ip, header:NAME or jwt (default ip)
//	-jwt-secret      HMAC secret for -key jwt (HS256: at least 32 bytes)
//	-trusted-proxies CIDR list of proxies whose forwarding headers are believed (-key ip)
//	-store           memory, or a Redis URL (below)
//	-fail            open or closed: what happens when the store fails
//	-dry-run         decide and report every request, deny none; the headers tell the truth
//	-metrics         serve the Prometheus metrics on GET /metrics, never limited
//	-tier-claim      with -key jwt: the token claim that picks one of the -tier flags
//	-tier            NAME=LIMIT, repeated; the first is the default (and replaces -limit)
//	-count-only-failures  a response with a status below 400 gives its cost back
//	-concurrency     N: at most N requests of one client running at once (GET /slow?ms=N
//	                 runs N ms), on every server sharing the store; 429 beyond it
//	-rules           FILE, or a Redis URL (below): the rules document, in place of
//	                 -limit, -burst, -algorithm, -key, -tier-claim and -tier (giving
//	                 both is an error)
//	-rules-poll      with a Redis -rules: how often the rules' version is read besides
//	                 the announcements of pushes (default 30s, from 10ms to 24h)
//	-rules-fallback  with a Redis -rules: the rules file used while Redis cannot give
//	                 the rules at start
//	-redis-password-file  FILE holding the password of the Redis of -store and -rules,
//	                 used when their URL has none ($RATEWARDEN_REDIS_PASSWORD otherwise)
//	-redis-ca        PEM FILE of the CA of a TLS -store or -rules (a private CA)
//
// The Redis URLs of -store and -rules are those of redisstore.ParseURL, a
// managed Redis's included:
//
//	redis://[user:password@]host:port[/db][?options]
//	redis-cluster://[user:password@]host:port,host:port[?options]
//	redis-sentinel://[user:password@]host:port,host:port/master[/db][?options]
//	rediss://, rediss-cluster://, rediss-sentinel://   the same over TLS
//
// with go-redis's query options (dial_timeout=2s, read_timeout, pool_size,
// ...). The password belongs off the command line: the user goes in the URL
// and the password in $RATEWARDEN_REDIS_PASSWORD or in the file of
// -redis-password-file (a mounted secret), which wins over the variable; a
// password in the URL wins over both. A TLS URL checks the server's
// certificate and name against the system's roots, or the CA of -redis-ca;
// verification cannot be turned off. No message, log line or -h shows a
// password: a URL is quoted with it as xxxxx, and a refused password
// (WRONGPASS, NOAUTH) or an untrusted certificate is said in a sentence.
//
// Without -rules, every server answers GET / (200), POST /login (200 for the
// form field password=letmein, 401 otherwise: the failures
// -count-only-failures counts), GET /healthz (never limited) and, under
// -metrics, GET /metrics (never limited), each through its framework's own
// router (Config.Routes), and 404 to anything else.
//
// With -rules, the document decides which requests are limited, and how: the
// limiter runs before the router on every request, so a path no policy
// matches (a 404 among them) gets no rate-limit header, RateLimit-Policy
// names every policy that applied, and on a 429 the RateLimit field names the
// one that denied. The servers answer a small API: GET / (200), GET and POST
// /api/items (200, 201), GET and DELETE /api/items/{id} (200; :id in Gin, Echo
// and Fiber), POST /login (200 with the header X-Password: right, 401
// otherwise), GET /healthz (200; examples/rules.yaml exempts it) and, under
// -metrics, GET /metrics (never limited), and 404 to anything else. The other
// flags apply to every policy: -store keeps the counters, -fail closed makes
// every policy fail closed (with -fail open each fails as its document says),
// -dry-run makes every policy dry, -count-only-failures gives back the cost of
// every response below 400, -metrics observes every policy, -trusted-proxies
// says who the client is for the "ip" keys, and -jwt-secret verifies the
// tokens of the jwt_claim keys and tiers (HS256; a document that names a
// claim is refused without it).
//
// A rules file is watched (rules.WatchFile): an editor's save, a rewrite in
// place, a ConfigMap swap take effect without a restart, and SIGHUP reads it
// again. Rules in Redis (rules.WatchRedis, pushed with ratewarden rules push)
// are loaded at start, on every announcement of a push, and every -rules-poll.
// A server without -rules-fallback does not start while Redis cannot give the
// rules (exit status 1); with it, it starts with the file's rules, says so,
// and takes Redis's as soon as Redis gives them. Every reload, taken or
// refused, and every trouble with the rules' source is one line on stderr;
// a document that fails validation is refused with every problem, and the
// rules in force stay. The rules' Redis client is not the store's: -rules and
// -store may name different servers.
//
// The limiter's errors (a store down or slow past its timeout, which -fail
// open lets through and -fail closed answers with 503) go to stderr, one line
// per interval at most; the errors a line leaves out are counted in a line
// when the interval ends and when the server stops, so the lines add up to
// every request that was let through without a decision. -metrics counts them
// too: ratewarden_decisions_total{outcome="failed_open"}. A Redis client is
// warmed up (pinged) before the server takes requests, so the first requests
// do not wait for its start-up; a Redis that does not answer then is a line on
// the error log, and the server starts anyway. A server on Redis follows the
// announcements of resets and refunds (luascript.Store.FollowResets): a
// ratewarden key reset, or a reset or refund on another server, drops its
// cached denials of the key at once.
//
// The gRPC server (examples/grpc) takes the same flags through ParseGRPC and
// LoadGRPC, with the same checks and -h text (-fail and -count-only-failures
// said in gRPC's terms), less -metrics, plus -metrics-addr HOST:PORT, which
// serves the metrics over plain HTTP at MetricsPath; -addr defaults to
// DefaultGRPCAddr. -key header:NAME reads the metadata entry NAME and -key
// jwt the bearer token of the authorization entry, through grpcmw's view of
// a call; without -rules the health service and server reflection
// (IsUnlimitedCall) are never limited, and with -rules the document decides
// (examples/rules-grpc.yaml exempts the health service).
//
// Every value is checked before the server starts; a bad one is a one-line
// message on stderr and exit status 2. A rules file that exists but fails
// validation is exit status 1, with every problem on stderr, a line each.
package flags
