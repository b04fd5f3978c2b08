package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// conn is a connection to the Redis of --redis.
type conn struct {
	client  redis.UniversalClient
	backend *redisstore.RulesBackend
}

// connect makes a client of --redis (checked by then); it dials on its first
// command.
func (e *env) connect() (*conn, error) {
	opts, err := redisstore.ParseURL(e.redisURL, e.urlOptions()...)
	if err != nil {
		return nil, usageErr("--redis: %v", err)
	}
	client := redis.NewUniversalClient(opts)
	b, err := redisstore.NewRulesBackend(client)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return &conn{client: client, backend: b}, nil
}

func (c *conn) close() { _ = c.client.Close() }

// rulesOptions are the options of every rules call: --prefix, --timeout.
func (e *env) rulesOptions() []rules.RedisOption {
	return []rules.RedisOption{rules.WithRedisPrefix(e.prefix), rules.WithRedisTimeout(e.timeout)}
}

// docKey names the rules' key in messages.
func (e *env) docKey() string { return e.prefix + "{rules}:doc" }

// fetchRules reads the rules Redis holds, on a connection of its own.
func (e *env) fetchRules() (raw []byte, version int64, err error) {
	c, err := e.connect()
	if err != nil {
		return nil, 0, err
	}
	defer c.close()
	raw, version, err = rules.FetchRules(context.Background(), c.backend, e.rulesOptions()...)
	return raw, version, e.explain(err)
}

// pushRules stores raw in Redis and announces it, on a connection of its
// own, and returns the version pushed.
func (e *env) pushRules(raw []byte) (int64, error) {
	c, err := e.connect()
	if err != nil {
		return 0, err
	}
	defer c.close()
	v, err := rules.PushRules(context.Background(), c.backend, raw, e.rulesOptions()...)
	return v, e.explain(err)
}

// withStoredSet runs do, within --timeout, on the Set of the rules in Redis
// (storedSet), for key show and key reset.
func (e *env) withStoredSet(do func(ctx context.Context, set *rules.Set) error) error {
	c, err := e.connect()
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	set, err := e.storedSet(ctx, c)
	if err != nil {
		return e.explain(err)
	}
	return e.explain(do(ctx, set))
}

// explain says what a refused password or an unverified certificate means
// (redisstore.ExplainError), naming the Redis by its URL, password
// redacted; other errors are returned as they are.
func (e *env) explain(err error) error {
	explained := redisstore.ExplainError(err)
	if explained == err {
		return err
	}
	return fmt.Errorf("ratewarden: %s: %w", redisstore.RedactURL(e.redisURL), explained)
}

// storedSet fetches the rules in Redis and builds the Set they define on the
// Redis store under --prefix, as every instance does, for key show and key
// reset. The Set never decides a request: a JWT claim key is accepted
// without a verifier.
func (e *env) storedSet(ctx context.Context, c *conn) (*rules.Set, error) {
	raw, version, err := rules.FetchRules(ctx, c.backend, e.rulesOptions()...)
	if err != nil {
		return nil, err
	}
	doc, err := rules.Parse(raw, "redis")
	if err != nil {
		return nil, err // FetchRules parsed it already
	}
	st, err := redisstore.New(c.client, luascript.WithPrefix(e.prefix))
	if err != nil {
		return nil, err
	}
	set, err := rules.New(st, doc,
		rules.WithLogger(slog.New(slog.DiscardHandler)),
		rules.WithClaimKey(func(string) (keyfuncs.Func, error) { return noRequests, nil }))
	if err != nil {
		return nil, fmt.Errorf("ratewarden: the rules in %s (version %d) do not compile: %w", e.docKey(), version, err)
	}
	return set, nil
}

// noRequests is the key function of a JWT claim in the tool's Set, which
// decides no request.
func noRequests(keyfuncs.Request) (string, error) {
	return "", fmt.Errorf("%w: the operator's tool decides no request", core.ErrInvalidOption)
}
