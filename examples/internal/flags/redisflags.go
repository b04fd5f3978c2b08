package flags

import (
	"flag"
	"strings"

	"github.com/redis/go-redis/v9"

	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// envRedisPassword is the environment variable of the Redis password, used
// when a URL of -store or -rules has none and -redis-password-file is not
// given: the same as the operator's tool's.
const envRedisPassword = "RATEWARDEN_REDIS_PASSWORD"

// defineRedis declares -redis-password-file and -redis-ca on fs.
func (r *rawFlags) defineRedis(fs *flag.FlagSet) {
	fs.StringVar(&r.redisPasswordFile, "redis-password-file", "", "a `FILE` holding the password of the Redis of -store and -rules, used when\n"+
		"their URL has none (a mounted secret; its trailing newline is dropped); without it,\n$"+
		envRedisPassword+" gives the password. Keep passwords off the command line.")
	fs.StringVar(&r.redisCA, "redis-ca", "", "a PEM `FILE` of the CA that signed the certificate of the Redis of a TLS -store or\n"+
		"-rules (rediss://...), for a private CA; without it, the system's roots. The\ncertificate and its name are always checked")
}

// isRedisURL reports whether s names Redis rather than memory or a file: a
// redis://, rediss://, redis[s]-cluster:// or redis[s]-sentinel:// URL.
func isRedisURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (scheme == "redis" || scheme == "rediss" || strings.HasPrefix(scheme, "redis-") || strings.HasPrefix(scheme, "rediss-"))
}

// isTLSURL reports whether s is a Redis URL that speaks TLS.
func isTLSURL(s string) bool { return strings.HasPrefix(s, "rediss") }

// parseRedisURL reads the Redis URL of the flag name with the password of
// -redis-password-file or $RATEWARDEN_REDIS_PASSWORD and, for a TLS URL,
// the CA of -redis-ca. Its errors never hold the password.
func (c *Config) parseRedisURL(name, s string) (*redis.UniversalOptions, error) {
	opts := []redisstore.URLOption{redisstore.WithPassword(c.redisPassword), redisstore.WithPasswordFile(c.RedisPasswordFile)}
	if isTLSURL(s) {
		opts = append(opts, redisstore.WithCAFile(c.RedisCA))
	}
	uo, err := redisstore.ParseURL(s, opts...)
	if err != nil {
		return nil, usageErr("%s: %v", name, err)
	}
	return uo, nil
}

// checkRedisFlags checks that -redis-password-file and -redis-ca go with a
// Redis URL (-redis-ca: with a TLS one).
func (c *Config) checkRedisFlags() error {
	storeTLS := c.RedisOptions != nil && c.RedisOptions.TLSConfig != nil
	rulesTLS := c.RulesRedisOptions != nil && c.RulesRedisOptions.TLSConfig != nil
	switch {
	case c.RedisPasswordFile != "" && c.RedisOptions == nil && c.RulesRedisOptions == nil:
		return usageErr("-redis-password-file is only used with a Redis -store or -rules")
	case c.RedisCA != "" && !storeTLS && !rulesTLS:
		return usageErr("-redis-ca is only used with a TLS -store or -rules (rediss://, rediss-cluster://, rediss-sentinel://)")
	}
	return nil
}
