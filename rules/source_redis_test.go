package rules

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// A push stores a newer version and refuses an older one, saying which
// version Redis holds; versions compare as integers up to the largest int64.
// The rules Redis holds, pushed again, are a no-op that succeeds.
func TestPushRulesVersions(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	ctx := context.Background()
	prefix := redisPrefix()
	steps := []struct {
		push, want int64
		stale      bool
	}{
		{push: 9, want: 9},
		{push: 10, want: 10}, // "10" < "9" as text: compared as numbers
		{push: 10, want: 10}, // the same rules: no-op
		{push: 2, want: 10, stale: true},
		{push: 9223372036854775806, want: 9223372036854775806},
		{push: 999999999999999999, want: 9223372036854775806, stale: true},
		{push: 9223372036854775807, want: 9223372036854775807},
	}
	for _, s := range steps {
		raw := redisDoc(s.push, "5/s")
		got, err := PushRules(ctx, b, []byte(raw), WithRedisPrefix(prefix))
		assert.Equal(t, s.want, got, "push %d", s.push)
		if s.stale {
			require.ErrorIs(t, err, ErrStaleRules, "push %d", s.push)
			assert.Contains(t, err.Error(), prefix+"{rules}:doc holds version")
			continue
		}
		require.NoError(t, err)
		text, v, err := FetchRules(ctx, b, WithRedisPrefix(prefix))
		require.NoError(t, err)
		assert.Equal(t, s.push, v)
		assert.Equal(t, raw, string(text))
	}
}

// A document that fails validation is refused before it reaches Redis, with
// its problems; Redis keeps what it held.
func TestPushRulesInvalid(t *testing.T) {
	b := newRESP(redistest.Start(t).Addr())
	ctx := context.Background()
	prefix := redisPrefix()
	longKey := strings.Repeat("k", 10<<10)
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", ""},
		{"not YAML", "schema: [1\n", ""},
		{"newer schema", "schema: 2\nversion: 3\npolicies:\n  - {name: api, limits: [1/s]}\n", "schema"},
		{"bad limit", "schema: 1\nversion: 3\npolicies:\n  - {name: api, limits: [1/x]}\n", "limits[0]"},
		{"no version", "schema: 1\npolicies:\n  - {name: api, limits: [1/s]}\n", "version"},
		{"10 KB override key", "schema: 1\nversion: 3\npolicies:\n  - name: api\n    limits: [1/s]\n    overrides:\n      - {key: " + longKey + ", blocked: true}\n", "overrides[0]"},
		{"larger than 4 MiB", "schema: 1\nversion: 3\n#" + strings.Repeat("x", MaxDocumentSize) + "\n", "4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PushRules(ctx, b, []byte(tt.doc), WithRedisPrefix(prefix))
			assert.Zero(t, got)
			require.ErrorIs(t, err, ErrInvalidRules)
			var p *Problems
			require.ErrorAs(t, err, &p)
			assert.Contains(t, err.Error(), tt.want)
			assert.Less(t, len(err.Error()), 4096, "the message stays readable")
			_, _, err = FetchRules(ctx, b, WithRedisPrefix(prefix))
			assert.ErrorIs(t, err, ErrNoRules, "nothing was stored")
		})
	}
}

// A rules key that holds what no push writes is a clear error for a fetch
// and, when the version cannot be compared, for a push, which then leaves it
// alone.
func TestRedisGarbage(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	ctx := context.Background()
	tests := []struct {
		name      string
		setup     [][]string // commands, with KEY for the rules key
		want      string
		pushStays bool // a push is refused too, and the key kept
	}{
		{"a string", [][]string{{"SET", "KEY", "schema: 1"}}, "holds a string, not the hash", true},
		{"a list", [][]string{{"RPUSH", "KEY", "x"}}, "holds a list", true},
		{"no version", [][]string{{"HSET", "KEY", "text", "x"}}, `the version "" is not a positive integer`, true},
		{"version not a number", [][]string{{"HSET", "KEY", "version", "seven", "text", "x"}}, `the version "seven"`, true},
		{"version zero", [][]string{{"HSET", "KEY", "version", "0", "text", "x"}}, `"0"`, true},
		{"version negative", [][]string{{"HSET", "KEY", "version", "-3", "text", "x"}}, `"-3"`, true},
		{"version padded", [][]string{{"HSET", "KEY", "version", "007", "text", "x"}}, `"007"`, true},
		{"version beyond int64", [][]string{{"HSET", "KEY", "version", "99999999999999999999", "text", "x"}}, "not a positive integer", true},
		{"version beyond int64, 19 digits", [][]string{{"HSET", "KEY", "version", "9999999999999999999", "text", "x"}}, "not a positive 64-bit integer", true},
		{"no text", [][]string{{"HSET", "KEY", "version", "4"}}, "has a version (4) but no text", false},
		{"text not YAML", [][]string{{"HSET", "KEY", "version", "4", "text", "\x00\x01{["}}, "redis:1: not valid YAML", false},
		{"text of a newer schema", [][]string{{"HSET", "KEY", "version", "4", "text", "schema: 2\nversion: 4\npolicies: []\n"}}, "schema", false},
		{"text with a 10 KB override key", [][]string{{"HSET", "KEY", "version", "4", "text", "schema: 1\nversion: 4\npolicies:\n  - name: api\n    limits: [1/s]\n    overrides:\n      - {key: " + strings.Repeat("k", 10<<10) + ", blocked: true}\n"}}, "overrides[0]", false},
		{"another version in the text", [][]string{{"HSET", "KEY", "version", "4", "text", redisDoc(3, "1/s")}}, "the document's version is 3, the stored version 4", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := redisPrefix()
			key := prefix + "{rules}:doc"
			for _, c := range tt.setup {
				args := append([]string(nil), c...)
				args[1] = key
				redisDo(t, srv.Addr(), args...)
			}
			_, _, err := FetchRules(ctx, b, WithRedisPrefix(prefix))
			require.ErrorIs(t, err, ErrRedisGarbage)
			assert.Contains(t, err.Error(), key)
			assert.Contains(t, err.Error(), tt.want)
			assert.Less(t, len(err.Error()), 4096, "the message stays readable")
			if strings.HasPrefix(tt.name, "text") {
				assert.ErrorIs(t, err, ErrInvalidRules, "the document's problems are kept")
			}

			before := redisDo(t, srv.Addr(), "DUMP", key)
			_, err = PushRules(ctx, b, []byte(redisDoc(5, "1/s")), WithRedisPrefix(prefix))
			if !tt.pushStays {
				require.NoError(t, err, "a newer version replaces a bad text")
				return
			}
			require.ErrorIs(t, err, ErrRedisGarbage)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, before, redisDo(t, srv.Addr(), "DUMP", key), "the key is left alone")
		})
	}
}

// Redis down, hung or failing: every call fails with ErrRedisFailed, within
// the timeout.
func TestRedisFailed(t *testing.T) {
	srv := redistest.StartLocal(t)
	ctx := context.Background()
	short := WithRedisTimeout(200 * time.Millisecond)
	srv.Pause(t)
	began := time.Now()
	_, err := PushRules(ctx, newRESP(srv.Addr()), []byte(redisDoc(1, "1/s")), short)
	require.ErrorIs(t, err, ErrRedisFailed)
	_, _, err = FetchRules(ctx, newRESP(srv.Addr()), short)
	require.ErrorIs(t, err, ErrRedisFailed)
	assert.Less(t, time.Since(began), 5*time.Second, "a hung Redis costs the timeout")
	srv.Resume(t)
	srv.Stop(t)
	_, err = PushRules(ctx, newRESP(srv.Addr()), []byte(redisDoc(1, "1/s")))
	require.ErrorIs(t, err, ErrRedisFailed)
	assert.Contains(t, err.Error(), "connection refused")
	_, _, err = FetchRules(ctx, newRESP(srv.Addr()))
	require.ErrorIs(t, err, ErrRedisFailed)
}

// A backend that mangles replies is an error, never a panic.
func TestRedisUnexpectedReplies(t *testing.T) {
	for _, reply := range [][]string{nil, {}, {"ok"}, {"what"}, {"stale"}, {"stale", "x"}, {"none", "x"}, {"ok", "1"}} {
		b := fixedReply(reply)
		_, err := PushRules(context.Background(), b, []byte(redisDoc(3, "1/s")))
		require.Error(t, err, "%q", reply)
		_, _, err = FetchRules(context.Background(), b)
		require.Error(t, err, "%q", reply)
	}
}

// fixedReply is a backend whose every script replies the same.
type fixedReply []string

func (f fixedReply) Eval(context.Context, string, string, []string, []string) ([]string, error) {
	return f, nil
}

func (f fixedReply) Subscribe(ctx context.Context, _ string, _ func(), _ func(string)) error {
	<-ctx.Done()
	return ctx.Err()
}

// Every option and argument is checked.
func TestRedisOptionsBad(t *testing.T) {
	b := newRESP("127.0.0.1:1")
	s, _ := newRedisSet(t, 1)
	tests := []struct {
		name string
		opt  RedisOption
	}{
		{"nil option", nil},
		{"prefix with a brace", WithRedisPrefix("app{x}:")},
		{"prefix too long", WithRedisPrefix(strings.Repeat("p", 257))},
		{"poll zero", WithRedisPollInterval(0)},
		{"poll negative", WithRedisPollInterval(-time.Second)},
		{"poll too short", WithRedisPollInterval(time.Millisecond)},
		{"poll too long", WithRedisPollInterval(25 * time.Hour)},
		{"timeout zero", WithRedisTimeout(0)},
		{"timeout too long", WithRedisTimeout(2 * time.Hour)},
		{"fallback empty", WithFallbackFile("")},
		{"fallback with NUL", WithFallbackFile("a\x00b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PushRules(context.Background(), b, []byte(redisDoc(1, "1/s")), tt.opt)
			assert.ErrorIs(t, err, core.ErrInvalidOption)
			_, _, err = FetchRules(context.Background(), b, tt.opt)
			assert.ErrorIs(t, err, core.ErrInvalidOption)
			w, err := WatchRedis(s, b, tt.opt)
			assert.Nil(t, w)
			assert.ErrorIs(t, err, core.ErrInvalidOption)
		})
	}
	_, err := PushRules(context.Background(), nil, []byte(redisDoc(1, "1/s")))
	assert.ErrorIs(t, err, core.ErrInvalidOption)
	_, _, err = FetchRules(context.Background(), nil)
	assert.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = WatchRedis(nil, b)
	assert.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = WatchRedis(s, nil)
	assert.ErrorIs(t, err, core.ErrInvalidOption)
	assert.True(t, errors.Is(WithRedisPrefix("")(&redisConfig{}), nil), "an empty prefix is allowed")
}
