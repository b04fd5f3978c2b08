// Package flags parses the flags every example server shares and builds from
// them what the servers need: a core.Limiter on the chosen store, the key
// function and the HTTP policy options, and a listener.
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
//	-store           memory, redis://host:port/db or redis-cluster://host:port,host:port
//	-fail            open or closed: what happens when the store fails
//	-dry-run         decide and report every request, deny none; the headers tell the truth
//	-metrics         serve the Prometheus metrics on GET /metrics, never limited
//	-tier-claim      with -key jwt: the token claim that picks one of the -tier flags
//	-tier            NAME=LIMIT, repeated; the first is the default (and replaces -limit)
//	-count-only-failures  a response with a status below 400 gives its cost back
//
// Every server answers GET / (200), POST /login (200 for the form field
// password=letmein, 401 otherwise: the failures -count-only-failures counts),
// GET /healthz (never limited) and, under -metrics, GET /metrics (never
// limited), each through its framework's own router.
//
// The limiter's errors (a store down or slow past its timeout, which -fail
// open lets through and -fail closed answers with 503) go to stderr, one line
// per interval at most; the errors a line leaves out are counted in a line
// when the interval ends and when the server stops, so the lines add up to
// every request that was let through without a decision. -metrics counts them
// too: ratewarden_decisions_total{outcome="failed_open"}. A Redis client is
// warmed up (pinged) before the server takes requests, so the first requests
// do not wait for its start-up; a Redis that does not answer then is a line on
// the error log, and the server starts anyway.
//
// Every value is checked before the server starts; a bad one is a one-line
// message on stderr and exit status 2.
package flags
