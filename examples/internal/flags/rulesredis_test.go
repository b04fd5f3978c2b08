package flags

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// rulesBackend returns a backend of the Redis at url, to push rules as the
// operator's tool does.
func rulesBackend(t *testing.T, url string) rules.RedisBackend {
	t.Helper()
	opts, err := redisstore.ParseURL(url)
	require.NoError(t, err)
	client := redis.NewUniversalClient(opts)
	t.Cleanup(func() { assert.NoError(t, client.Close()) })
	b, err := redisstore.NewRulesBackend(client)
	require.NoError(t, err)
	return b
}

// push stores doc in Redis and announces it.
func push(t *testing.T, b rules.RedisBackend, doc string) {
	t.Helper()
	_, err := rules.PushRules(context.Background(), b, []byte(doc))
	require.NoError(t, err)
}

// policyOf returns the RateLimit-Policy a request of its own IP gets.
func (s *rulesServer) policyOf(t *testing.T, ip string) string {
	t.Helper()
	rec := s.get("/", ip+":1000")
	assert.Equal(t, 200, rec.Code)
	return rec.Header().Get("RateLimit-Policy")
}

// A server with -rules redis:// or redis-cluster:// starts with the rules
// pushed, and a push takes effect at once, without a restart. The servers
// own Redis (a process of the test's), since the rules' keys are the
// default prefix's.
func TestBuildRulesRedis(t *testing.T) {
	tests := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"single node", func(t *testing.T) string { return "redis://" + redistest.StartLocal(t).Addr() + "/0" }},
		{"cluster", func(t *testing.T) string { return "redis-cluster://" + strings.Join(redistest.StartCluster(t), ",") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url(t)
			b := rulesBackend(t, url)
			ctx := context.Background()
			_, current, err := rules.FetchRules(ctx, b)
			if err != nil {
				current = 0 // nothing pushed yet
			}
			push(t, b, rulesDoc(int(current)+1, "5/m"))
			s := startRules(t, "-rules", url)
			assert.Equal(t, `"api";q=5;w=60`, s.policyOf(t, "192.0.2.1"))

			push(t, b, rulesDoc(int(current)+2, "7/m"))
			r := s.waitReload(t)
			require.NoError(t, r.Err)
			assert.Equal(t, rules.RedisSource, r.Source)
			assert.Equal(t, current+2, r.Version)
			assert.Equal(t, `"api";q=7;w=60`, s.policyOf(t, "192.0.2.2"))
			// What SIGHUP does: the watcher reads the version now, once it
			// has done with the announcement (and logged its load).
			require.NoError(t, s.setup.reload(ctx))
			assert.Contains(t, s.log.String(), `msg="ratewarden: rules loaded from redis" key=rw:{rules}:doc version=`+strconv.FormatInt(current+2, 10)+
				" digest="+rules.ShortDigest(r.Digest)+"\n")
			assert.Equal(t, s.setup.Rules.Digest(), r.Digest)
		})
	}
}

// -rules-poll reads the version in Redis even when no announcement comes: a
// document stored without one (as when the announcement is lost) is loaded
// at the next poll.
func TestBuildRulesRedisPoll(t *testing.T) {
	srv := redistest.StartLocal(t)
	b := rulesBackend(t, srv.URL())
	push(t, b, rulesDoc(1, "5/m"))
	s := startRules(t, "-rules", "redis://"+srv.Addr(), "-rules-poll", "20ms")

	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()
	require.NoError(t, client.HSet(context.Background(), "rw:{rules}:doc", "text", rulesDoc(2, "9/m"), "version", "2").Err())
	r := s.waitReload(t)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(2), r.Version)
	assert.Equal(t, `"api";q=9;w=60`, s.policyOf(t, "192.0.2.3"))
}

// A server that starts while Redis is down uses -rules-fallback, and says
// so; once Redis is back, a push takes effect. Without -rules-fallback it
// does not start, and says how to.
func TestBuildRulesRedisDown(t *testing.T) {
	srv := redistest.StartLocal(t)
	srv.Stop(t)
	fallback := writeRules(t, "fallback.yaml", rulesDoc(3, "4/m"))
	s := startRules(t, "-rules", "redis://"+srv.Addr(), "-rules-fallback", fallback, "-rules-poll", "50ms")
	assert.Equal(t, int64(3), s.setup.Rules.Version())
	assert.Equal(t, `"api";q=4;w=60`, s.policyOf(t, "192.0.2.4"))
	first := s.waitReload(t)
	assert.ErrorIs(t, first.Err, rules.ErrRedisFailed)
	assert.Equal(t, rules.RedisSource, first.Source)
	second := s.waitReload(t)
	require.NoError(t, second.Err)
	assert.Equal(t, fallback, second.Source)
	log := s.log.String()
	assert.Contains(t, log, `msg="ratewarden: rules in redis not loaded at start; loading the fallback file until they are"`)
	assert.Contains(t, log, `msg="ratewarden: rules loaded" source=`+fallback+" version=3\n")

	srv.Restart(t)
	push(t, rulesBackend(t, srv.URL()), rulesDoc(4, "6/m"))
	for r := s.waitReload(t); r.Err != nil || r.Version != 4; r = s.waitReload(t) {
		// Before the push loads: Redis's outage, or, once it is back, its
		// lack of rules (a poll between the restart and the push).
		if !errors.Is(r.Err, rules.ErrNoRules) {
			assert.ErrorIs(t, r.Err, rules.ErrRedisFailed, "only Redis's outage or emptiness is reported before the push loads")
		}
	}
	assert.Equal(t, `"api";q=6;w=60`, s.policyOf(t, "192.0.2.5"))

	var stderr bytes.Buffer
	down := redistest.StartLocal(t)
	down.Stop(t)
	setup, code := Load("ex", []string{"-rules", "redis://" + down.Addr()}, &stderr)
	assert.Nil(t, setup)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "ex: ratewarden: redis failed")
	assert.Contains(t, stderr.String(), "give -rules-fallback FILE")
}

// A Redis that holds no rules and no -rules-fallback: the server does not
// start, and the message says to push some.
func TestBuildRulesRedisEmpty(t *testing.T) {
	srv := redistest.StartLocal(t)
	var stderr bytes.Buffer
	s, code := Load("ex", []string{"-rules", srv.URL()}, &stderr)
	assert.Nil(t, s)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "ex: ratewarden: no rules in redis")
	assert.Contains(t, stderr.String(), "push the rules with ratewarden rules push FILE")
}
