package redisstore

import (
	"crypto/tls"
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
const URLForms = "redis[s]://[user:pass@]host:port[/db], redis[s]-cluster://[user:pass@]host:port,... " +
	"or redis[s]-sentinel://[user:pass@]host:port,.../master[/db], each with ?options"

// maxURLLen bounds the URLs ParseURL reads: room for a long password, every
// byte of it percent-encoded.
const maxURLLen = 64 << 10

// The kinds of deployment a URL names, by its scheme without the "s" of TLS.
const (
	schemeSingle   = "redis"
	schemeCluster  = "redis-cluster"
	schemeSentinel = "redis-sentinel"
)

// refusedQuery are query options ParseURL refuses, and why: secrets do not go
// in a query, the addresses are the URL's host list, and TLS is verified.
var refusedQuery = map[string]string{
	"password":                  "a password goes in the URL's user info, or in a password file",
	"username":                  "a user goes in the URL's user info",
	"sentinel_password":         "a password goes in the URL's user info, or in a password file",
	"sentinel_username":         "a user goes in the URL's user info",
	"addr":                      "the addresses are the URL's host list, comma-separated",
	"master_name":               "the master's name is the URL's path, redis-sentinel://host:port/master",
	"skip_verify":               "the server's certificate is always verified: give its CA with a CA file instead",
	"replica_only":              "replica reads are not supported",
	"use_disconnected_replicas": "replica reads are not supported",
	"context_timeout_enabled":   "contexts always bound the calls",
}

// ParseURL reads a Redis URL in one of the forms ratewarden's tool and
// example servers take, on go-redis's own parsers (redis.ParseURL,
// redis.ParseClusterURL, redis.ParseFailoverURL):
//
//	redis://[user:password@]host:port[/db][?options]
//	        a single server; database db (default 0)
//	redis-cluster://[user:password@]host:port,host:port[?options]
//	        a Redis Cluster, found through any of the nodes listed
//	redis-sentinel://[user:password@]host:port,host:port/master[/db][?options]
//	        the master named master, found through the Sentinels listed
//
// Each scheme with an "s" (rediss, rediss-cluster, rediss-sentinel) speaks
// TLS 1.2 or later and checks the server's certificate against the system's
// roots (or the CA of WithCAFile) and its name against the host, as go-redis
// does; verification cannot be turned off. The user and password (each
// percent-encoded: %40 for @, %3A for :, %2F for /) are sent with AUTH to
// every server; Sentinels are sent them too only with the option
// sentinel_auth=true. The options are go-redis's own query options
// (dial_timeout=3s, read_timeout, write_timeout, pool_size, min_idle_conns,
// max_retries, client_name, protocol, db, ... and for a cluster
// max_redirects, read_only, route_by_latency, route_randomly), checked by
// go-redis; those that would put a secret in the query (password), move the
// addresses (addr) or weaken TLS (skip_verify) are refused.
//
// It returns the options of a client of it, with ContextTimeoutEnabled set
// as New requires: redis.NewUniversalClient(opts) makes a *redis.Client, a
// *redis.ClusterClient (IsClusterMode is set, so one node is enough to find
// the cluster) or a failover client (MasterName is set). opts add a password
// taken from elsewhere than the URL (WithPassword, WithPasswordFile) and a CA
// (WithCAFile).
//
// Every port must be a number from 1 to 65535 and every host non-empty. A
// URL that cannot be read returns an error wrapping ErrURL that says what is
// wrong and quotes the URL with its password replaced by xxxxx (RedactURL):
// no error of ParseURL holds a password.
func ParseURL(s string, opts ...URLOption) (*redis.UniversalOptions, error) {
	var cfg urlConfig
	for _, o := range opts {
		o(&cfg)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s (want %s)", ErrURL, quoted(RedactURL(s)), fmt.Sprintf(format, args...), URLForms)
	}
	if len(s) > maxURLLen {
		return nil, bad("longer than %d bytes", maxURLLen)
	}
	p, err := splitURL(s)
	if err != nil {
		return nil, bad("%v", err)
	}
	uo, err := p.options()
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := cfg.apply(uo, p); err != nil {
		return nil, bad("%v", err)
	}
	return uo, nil
}

// parsedURL is a URL split into its parts, the user and password decoded.
type parsedURL struct {
	kind        string // schemeSingle, schemeCluster or schemeSentinel
	tls         bool
	user        string
	password    string
	hasPassword bool
	// sentinelAuth sends the user and password to the Sentinels too.
	sentinelAuth bool
	hosts        []string
	path         string // without its leading slash
	query        url.Values
}

// splitURL splits s into its parts. The user info runs to the last @, so a
// password with an @ left unencoded still never reaches a message.
func splitURL(s string) (*parsedURL, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, errors.New("no scheme")
	}
	p := &parsedURL{}
	p.kind, p.tls = scheme, false
	if base, ok := tlsScheme(scheme); ok {
		p.kind, p.tls = base, true
	}
	if p.kind != schemeSingle && p.kind != schemeCluster && p.kind != schemeSentinel {
		return nil, fmt.Errorf("unknown scheme %q", quoted(scheme))
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if err := p.setUserInfo(rest[:i]); err != nil {
			return nil, err
		}
		rest = rest[i+1:]
	}
	if strings.ContainsRune(rest, '#') {
		return nil, errors.New("a fragment (#) has no meaning here")
	}
	rest, rawQuery, hasQuery := strings.Cut(rest, "?")
	hostList, path, _ := strings.Cut(rest, "/")
	for _, h := range strings.Split(hostList, ",") {
		if err := checkHostPort(h); err != nil {
			return nil, err
		}
		p.hosts = append(p.hosts, h)
	}
	if p.kind == schemeSingle && len(p.hosts) > 1 {
		return nil, errors.New("one host:port for a single server (a cluster is redis-cluster://, Sentinels redis-sentinel://)")
	}
	var err error
	if p.path, err = url.PathUnescape(path); err != nil || strings.ContainsAny(p.path, "?#") {
		return nil, errors.New("the path is not a database number or a master's name")
	}
	if hasQuery && rawQuery == "" {
		return nil, errors.New("an empty query")
	}
	if p.query, err = url.ParseQuery(rawQuery); err != nil {
		return nil, fmt.Errorf("the query: %v", err)
	}
	return p, nil
}

// tlsScheme returns the scheme without the "s" of TLS: redis for rediss,
// redis-cluster for rediss-cluster.
func tlsScheme(scheme string) (string, bool) {
	if base, rest, ok := strings.Cut(scheme, "-"); ok && base == "rediss" {
		return "redis-" + rest, true
	}
	if scheme == "rediss" {
		return schemeSingle, true
	}
	return "", false
}

// setUserInfo decodes user[:password].
func (p *parsedURL) setUserInfo(info string) error {
	if strings.ContainsAny(info, "/?#") {
		return errors.New("the user or password holds a '/', '?' or '#': percent-encode it (%2F, %3F, %23)")
	}
	user, password, hasPassword := strings.Cut(info, ":")
	var err1, err2 error
	p.user, err1 = url.PathUnescape(user)
	p.password, err2 = url.PathUnescape(password)
	if err1 != nil || err2 != nil {
		return errors.New("the user or password has a bad %-escape (a % must start %XX, two hex digits)")
	}
	p.hasPassword = hasPassword && p.password != ""
	return nil
}

// options builds the client options with go-redis's parser of the form, on
// a URL without the user info (go-redis's errors may quote its URL), and
// sets the user and password after.
func (p *parsedURL) options() (*redis.UniversalOptions, error) {
	for name := range p.query {
		if why, refused := refusedQuery[name]; refused {
			return nil, fmt.Errorf("the option %s is refused: %s", name, why)
		}
	}
	var err error
	if p.sentinelAuth, err = p.takeBool("sentinel_auth"); err != nil {
		return nil, err
	}
	if p.sentinelAuth && p.kind != schemeSentinel {
		return nil, errors.New("sentinel_auth is an option of redis-sentinel:// only")
	}
	scheme := "redis"
	if p.tls {
		scheme = "rediss"
	}
	q := p.query
	for _, h := range p.hosts[1:] {
		q.Add("addr", h)
	}
	uo, err := p.parseWithGoRedis(scheme, q)
	if err != nil {
		return nil, err
	}
	uo.ContextTimeoutEnabled = true
	uo.Username, uo.Password = p.user, p.password
	if p.sentinelAuth {
		uo.SentinelUsername, uo.SentinelPassword = p.user, p.password
	}
	if uo.TLSConfig != nil {
		uo.TLSConfig.MinVersion = tls.VersionTLS12
	}
	if uo.DB < 0 {
		return nil, errors.New("the database must be a number, 0 or more")
	}
	return uo, nil
}

// parseWithGoRedis hands the URL to go-redis's parser of its form and
// converts the result.
func (p *parsedURL) parseWithGoRedis(scheme string, q url.Values) (*redis.UniversalOptions, error) {
	u := &url.URL{Scheme: scheme, Host: p.hosts[0]}
	switch p.kind {
	case schemeSingle:
		if err := checkDB(p.path); err != nil {
			return nil, err
		}
		u.Path, u.RawQuery = "/"+p.path, q.Encode()
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, goRedisErr(err)
		}
		return universal(o, []string{o.Addr}, false)
	case schemeCluster:
		if p.path != "" {
			return nil, errors.New("a cluster has no database: no path after the hosts")
		}
		u.RawQuery = q.Encode()
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, goRedisErr(err)
		}
		return universal(o, o.Addrs, true)
	}
	master, db, _ := strings.Cut(p.path, "/")
	if master == "" {
		return nil, errors.New("no master's name: redis-sentinel://host:port/master")
	}
	if err := checkDB(db); err != nil {
		return nil, err
	}
	q.Set("master_name", master)
	u.Path, u.RawQuery = "/"+db, q.Encode()
	o, err := redis.ParseFailoverURL(u.String())
	if err != nil {
		return nil, goRedisErr(err)
	}
	return universal(o, o.SentinelAddrs, false)
}

// takeBool removes the option name from the query and returns its value.
func (p *parsedURL) takeBool(name string) (bool, error) {
	v, ok := p.query[name]
	if !ok {
		return false, nil
	}
	delete(p.query, name)
	switch v[len(v)-1] {
	case "true", "1":
		return true, nil
	case "false", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("%s: want true or false", name)
}

// checkDB checks a database number in a path: empty (0), or 0 or more.
func checkDB(db string) error {
	if db == "" {
		return nil
	}
	if n, err := strconv.Atoi(db); err != nil || n < 0 || strings.HasPrefix(db, "+") {
		return errors.New("the database must be a number, 0 or more")
	}
	return nil
}

// goRedisErr returns go-redis's message, without the URL a *url.Error
// quotes.
func goRedisErr(err error) error {
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		return fmt.Errorf("not a URL: %v", uerr.Err)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "redis: "))
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
	if strings.ContainsAny(host, "/?#@%") || strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("%q is not host:port", quoted(a))
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
