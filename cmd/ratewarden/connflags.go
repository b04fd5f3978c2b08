package main

import (
	"flag"
	"os"

	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// readEnv takes the Redis connection's defaults from the environment.
func (e *env) readEnv() {
	if u := os.Getenv(envRedis); u != "" {
		e.redisURL = u
	}
	e.password = os.Getenv(envPassword)
	e.passwordFile = os.Getenv(envPasswordFile)
	e.caFile = os.Getenv(envCA)
}

// defineRedisFlags declares --redis, --redis-password-file and --redis-ca on
// fs. The default of --redis that -h prints has its password redacted: it
// may come from $RATEWARDEN_REDIS.
func (e *env) defineRedisFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.redisURL, "redis", e.redisURL, "the Redis `URL`: "+redisstore.URLForms+
		"\n($"+envRedis+" sets the default; see 'ratewarden -h' for the forms and options)")
	fs.Lookup("redis").DefValue = redisstore.RedactURL(e.redisURL)
	fs.StringVar(&e.passwordFile, "redis-password-file", e.passwordFile, "a `FILE` holding the Redis password, used when the URL has none\n"+
		"($"+envPasswordFile+" sets the default; $"+envPassword+" gives the password itself)")
	fs.StringVar(&e.caFile, "redis-ca", e.caFile, "a PEM `FILE` of the CA that signed the Redis server's certificate, for rediss://\n"+
		"(default $"+envCA+", or the system's roots)")
}

// urlOptions are what the URL is parsed with: the password of the
// environment or of the password file, and the CA file.
func (e *env) urlOptions() []redisstore.URLOption {
	return []redisstore.URLOption{
		redisstore.WithPassword(e.password),
		redisstore.WithPasswordFile(e.passwordFile),
		redisstore.WithCAFile(e.caFile),
	}
}
