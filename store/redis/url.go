package redisstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrURL reports a Redis URL ParseURL cannot read.
var ErrURL = errors.New("redisstore: bad Redis URL")

// URLForms names the URL forms ParseURL reads, for usage messages.
const URLForms = "redis://host:port/db or redis-cluster://host:port,host:port"

// maxURLLen bounds the URLs ParseURL reads (and quotes in its errors).
const maxURLLen = 4096

// ParseURL reads a Redis URL in one of the forms ratewarden's tool and
// example servers take:
//
//	redis://host:port            a single server, database 0
//	redis://host:port/db         a single server, database db (0 or more)
//	redis-cluster://host:port,host:port,...
//	                             a Redis Cluster, found through any of the
//	                             nodes listed (one is enough)
//
// and returns the options of a client of it, with ContextTimeoutEnabled set
// as New requires: redis.NewUniversalClient(opts) makes a *redis.Client, or a
// *redis.ClusterClient for redis-cluster (IsClusterMode is set, so a single
// node is enough to find the cluster). Set more options (a password, TLS, pool
// sizes) on the result before making the client. Every port must be a number
// from 1 to 65535 and every host non-empty; a user, password, query or
// fragment in the URL is refused, so that no secret ends up on a command line.
// It returns an error wrapping ErrURL that says what is wrong.
func ParseURL(s string) (*redis.UniversalOptions, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s (want %s)", ErrURL, quoted(s), fmt.Sprintf(format, args...), URLForms)
	}
	if len(s) > maxURLLen {
		return nil, bad("longer than %d bytes", maxURLLen)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		return nil, bad("no scheme")
	case scheme == "redis":
		return parseSingle(s, bad)
	case scheme == "redis-cluster":
		opts := &redis.UniversalOptions{IsClusterMode: true, ContextTimeoutEnabled: true}
		for _, a := range strings.Split(rest, ",") {
			if err := checkHostPort(a); err != nil {
				return nil, bad("%v", err)
			}
			opts.Addrs = append(opts.Addrs, a)
		}
		return opts, nil
	}
	return nil, bad("unknown scheme %q", quoted(scheme))
}

// parseSingle reads a redis:// URL.
func parseSingle(s string, bad func(string, ...any) error) (*redis.UniversalOptions, error) {
	u, err := url.Parse(s)
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		return nil, bad("not a URL: %v", uerr.Err)
	}
	if err != nil || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return nil, bad("not a plain redis URL: only host, port and database")
	}
	if err := checkHostPort(u.Host); err != nil {
		return nil, bad("%v", err)
	}
	opts := &redis.UniversalOptions{Addrs: []string{u.Host}, ContextTimeoutEnabled: true}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return nil, bad("the database must be a number, 0 or more")
		}
		opts.DB = n
	}
	return opts, nil
}

// checkHostPort checks that a is host:port with a port from 1 to 65535.
func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not host:port", quoted(a))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535", quoted(a))
	}
	return nil
}

// quoted shortens s for a message.
func quoted(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
