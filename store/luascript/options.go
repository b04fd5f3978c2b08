package luascript

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// DefaultPrefix starts every key unless WithPrefix says otherwise. It is
// short because Redis's memory per key is mostly the key's name.
const DefaultPrefix = "rw:"

// DefaultLocalCacheSize is how many denied requests the local cache holds
// unless WithLocalCache says otherwise.
const DefaultLocalCacheSize = 16384

const (
	maxPrefixLen = 256     // bounds WithPrefix
	maxCacheSize = 1 << 24 // bounds WithLocalCache
)

// Option configures a Store. New applies the options in order and returns the
// first error, which wraps core.ErrInvalidOption.
type Option func(*config) error

// config is what the options set.
type config struct {
	prefix      string
	callerClock bool
	minTTL      time.Duration
	cacheSize   int
	// minTTLArg is minTTL as the scripts take it (ARGV[3], whole
	// milliseconds), formatted once by New.
	minTTLArg string
	// channel is where resets and refunds are announced (resetChannel).
	channel string
}

func defaultConfig() config {
	return config{prefix: DefaultPrefix, cacheSize: DefaultLocalCacheSize}
}

// WithPrefix starts every key with prefix instead of DefaultPrefix. The prefix
// may be empty, may not be longer than 256 bytes, and may not hold '{' or '}'
// (they would move the hash tag).
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if err := CheckPrefix(prefix); err != nil {
			return err
		}
		c.prefix = prefix
		return nil
	}
}

// CheckPrefix returns an error wrapping core.ErrInvalidOption for a key prefix
// WithPrefix refuses: longer than 256 bytes, or holding '{' or '}'. Other
// keys kept beside the store's under the same prefix (the rules in Redis,
// package rules) are checked with it.
func CheckPrefix(prefix string) error {
	switch {
	case strings.ContainsAny(prefix, "{}"):
		return fmt.Errorf("%w: key prefix %q may not hold '{' or '}' (they would move the hash tag)", core.ErrInvalidOption, truncate(prefix))
	case len(prefix) > maxPrefixLen:
		return fmt.Errorf("%w: key prefix longer than %d bytes", core.ErrInvalidOption, maxPrefixLen)
	}
	return nil
}

// WithCallerClock makes the scripts decide at TakeRequest.Now (the limiter's
// clock) instead of the Redis server's TIME. Use it when the Redis service
// refuses TIME inside scripts (some managed services do), or in tests that move
// a manual clock. The application servers' clocks then define the windows: a
// server whose clock is ahead or behind by d shifts its view of every window by
// d, so skew between instances loosens or tightens the limit by up to d's worth
// of quota. Redis still expires keys on its own clock; see WithMinTTL.
func WithCallerClock() Option {
	return func(c *config) error {
		c.callerClock = true
		return nil
	}
}

// WithMinTTL sets a floor on the time to live of every key (default 0: a key
// expires exactly when its state equals a fresh one), rounded up to whole
// milliseconds; it may not be negative or longer than core.MaxPeriod. In
// caller-clock mode, a caller clock that runs slower than Redis's (a manual
// clock in tests) would otherwise let Redis expire state the caller still
// needs.
func WithMinTTL(d time.Duration) Option {
	return func(c *config) error {
		switch {
		case d < 0:
			return fmt.Errorf("%w: negative minimum TTL %s", core.ErrInvalidOption, d)
		case d > core.MaxPeriod:
			return fmt.Errorf("%w: minimum TTL %s is longer than %s", core.ErrInvalidOption, d, core.MaxPeriod)
		}
		c.minTTL = d
		return nil
	}
}

// WithLocalCache sets how many denied requests the store remembers locally,
// from 0 (no cache) to 2^24; the default is DefaultLocalCacheSize. While a
// remembered denial's RetryAfter runs, the same request (same namespace, key,
// algorithm, limits and cost) is denied again without a round trip to Redis;
// the package doc says why this never admits more than Redis would.
func WithLocalCache(size int) Option {
	return func(c *config) error {
		if size < 0 || size > maxCacheSize {
			return fmt.Errorf("%w: local cache size %d out of [0, %d]", core.ErrInvalidOption, size, maxCacheSize)
		}
		c.cacheSize = size
		return nil
	}
}

// apply applies opts over c.
func (c *config) apply(opts []Option) error {
	for _, o := range opts {
		if o == nil {
			return fmt.Errorf("%w: nil option", core.ErrInvalidOption)
		}
		if err := o(c); err != nil {
			return err
		}
	}
	c.minTTLArg = strconv.FormatInt(ceilMillis(c.minTTL), 10)
	c.channel = resetChannel(c.prefix)
	return nil
}

func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
