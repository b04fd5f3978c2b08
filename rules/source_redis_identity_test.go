package rules

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// redisLoad is the report of redisDoc(v, limit) loaded from Redis.
func redisLoad(v int64, limit string) Reload {
	doc, err := Parse([]byte(redisDoc(v, limit)), RedisSource)
	if err != nil {
		panic(err)
	}
	return Reload{Source: RedisSource, Version: v, Digest: doc.Digest()}
}

// storedStamp is the digest field Redis holds under prefix.
func storedStamp(t *testing.T, addr, prefix string) string {
	t.Helper()
	s, _ := redisDo(t, addr, "HGET", prefix+"{rules}:doc", "digest").(string)
	return s
}

// A push stores the digest beside the version. The same version and digest
// again is a no-op that announces them again; the same version with other
// rules is refused, naming both digests, and Redis keeps what it held.
func TestPushRulesIdentity(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	ctx := context.Background()
	prefix := redisPrefix()
	opt := WithRedisPrefix(prefix)
	pushed := redisLoad(3, "3/s")

	v, err := PushRules(ctx, b, []byte(redisDoc(3, "3/s")), opt)
	require.NoError(t, err)
	assert.Equal(t, int64(3), v)
	assert.Equal(t, "3:"+pushed.Digest, storedStamp(t, srv.Addr(), prefix))

	reformatted := "# the same rules, written otherwise\n{\"schema\": 1, \"version\": 3, \"policies\": [{\"limits\": [\"3/s\"], \"name\": \"api\"}]}\n"
	v, err = PushRules(ctx, b, []byte(reformatted), opt)
	require.NoError(t, err, "the same rules in JSON: one identity")
	assert.Equal(t, int64(3), v)
	raw, _, err := FetchRules(ctx, b, opt)
	require.NoError(t, err)
	assert.Equal(t, redisDoc(3, "3/s"), string(raw), "a no-op: the text pushed first stays")

	v, err = PushRules(ctx, b, []byte(redisDoc(3, "4/s")), opt)
	require.ErrorIs(t, err, ErrVersionConflict)
	assert.Equal(t, int64(3), v, "the version Redis holds")
	other := redisLoad(3, "4/s").Digest
	assert.Contains(t, err.Error(), "version 3, digest "+ShortDigest(other)+" pushed")
	assert.Contains(t, err.Error(), "holds version 3, digest "+ShortDigest(pushed.Digest))
	assert.Contains(t, err.Error(), "raise the document's version above 3")
	raw, _, err = FetchRules(ctx, b, opt)
	require.NoError(t, err)
	assert.Equal(t, redisDoc(3, "3/s"), string(raw), "a refused push changes nothing")
	assert.Equal(t, "3:"+pushed.Digest, storedStamp(t, srv.Addr(), prefix))

	_, err = PushRules(ctx, b, []byte(redisDoc(2, "3/s")), opt)
	require.ErrorIs(t, err, ErrStaleRules, "an older version, even of the same rules")
}

// Rules written by a ratewarden that stored no digest (no field, or the
// field of an earlier version, which its push left as it was) have no known
// digest: they load, and the same version cannot be pushed over them, since
// nothing tells the same rules from others.
func TestPushRulesOverRulesWithoutDigest(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	ctx := context.Background()
	for name, extra := range map[string][]string{
		"no digest":              nil,
		"an older push's digest": {"digest", "4:" + redisLoad(4, "4/s").Digest},
	} {
		t.Run(name, func(t *testing.T) {
			prefix := redisPrefix()
			args := append([]string{"HSET", prefix + "{rules}:doc", "version", "5", "text", redisDoc(5, "5/s")}, extra...)
			redisDo(t, srv.Addr(), args...)
			raw, v, err := FetchRules(ctx, b, WithRedisPrefix(prefix))
			require.NoError(t, err)
			assert.Equal(t, int64(5), v)
			assert.Equal(t, redisDoc(5, "5/s"), string(raw))
			_, err = PushRules(ctx, b, []byte(redisDoc(5, "5/s")), WithRedisPrefix(prefix))
			require.ErrorIs(t, err, ErrStaleRules)
			v, err = PushRules(ctx, b, []byte(redisDoc(6, "5/s")), WithRedisPrefix(prefix))
			require.NoError(t, err)
			assert.Equal(t, int64(6), v)
			assert.Equal(t, "6:"+redisLoad(6, "5/s").Digest, storedStamp(t, srv.Addr(), prefix))
		})
	}
}

// A digest field that is not the stored text's (a key edited by hand) or not
// what a push writes is garbage: FetchRules says so, and a watcher refuses
// it, reports it once and keeps the rules in force, also when the tampered
// version is the one in force.
func TestRedisTamperedDigest(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	ctx := context.Background()
	for name, digest := range map[string]string{
		"another text's digest": "4:" + redisLoad(4, "9/s").Digest,
		"not a digest":          "4:cafe",
		"no version":            redisLoad(4, "4/s").Digest,
	} {
		t.Run(name, func(t *testing.T) {
			prefix := redisPrefix()
			push(t, b, prefix, 4, "4/s")
			s, reloads := newRedisSet(t, 1)
			w := watch(t, s, b, prefix)
			require.Equal(t, redisLoad(4, "4/s"), nextReload(t, reloads))
			subscribedAndPolled(t, w, 1)

			redisDo(t, srv.Addr(), "HSET", prefix+"{rules}:doc", "digest", digest)
			_, _, err := FetchRules(ctx, b, WithRedisPrefix(prefix))
			require.ErrorIs(t, err, ErrRedisGarbage)
			err = w.Refresh(ctx)
			require.ErrorIs(t, err, ErrRedisGarbage)
			if strings.HasPrefix(name, "another") {
				assert.Contains(t, err.Error(), "the stored digest "+ShortDigest(redisLoad(4, "9/s").Digest)+
					" is not the digest of the stored text, "+ShortDigest(redisLoad(4, "4/s").Digest))
			}
			r := nextReload(t, reloads)
			assert.ErrorIs(t, r.Err, ErrRedisGarbage)
			assert.Equal(t, redisLoad(4, "4/s").Digest, r.Digest, "reported with the rules in force")
			assert.Equal(t, redisLoad(4, "4/s").Digest, s.Digest(), "the rules in force stay")
			require.ErrorIs(t, w.Refresh(ctx), ErrRedisGarbage, "still refused")
			requireNoReload(t, reloads)
		})
	}
}

// watchedInstance is one instance of a fleet: a Set on its own memory store,
// its reload reports and its log.
type watchedInstance struct {
	set     *Set
	reloads chan Reload
	log     *syncBuffer
}

// newInstance builds an instance whose Set starts with the rules file path.
func newInstance(t *testing.T, path string) *watchedInstance {
	t.Helper()
	doc, err := ReadFile(path)
	require.NoError(t, err)
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	in := &watchedInstance{reloads: make(chan Reload, 100), log: &syncBuffer{}}
	in.set, err = New(st, doc, WithReloadHook(func(r Reload) { in.reloads <- r }),
		WithLogger(slog.New(slog.NewTextHandler(in.log, nil))))
	require.NoError(t, err)
	return in
}

// Two instances, one reading the rules file and one Redis (started from the
// same file as its fallback), while the file and Redis hold version 11 with
// other rules: the Redis instance says so and follows Redis; the file
// instance refuses a same-version edit, as a push does, and both agree once
// the rules get a new version.
func TestFleetFileAndRedisDisagree(t *testing.T) {
	srv := redistest.Start(t)
	b := newRESP(srv.Addr())
	prefix := redisPrefix()
	push(t, b, prefix, 11, "9/s")
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(redisDoc(11, "1/s")), 0o644))
	clk := core.NewManualClock(core.SystemClock{}.Now())

	fileInst := newInstance(t, path)
	fw := startFileWatcher(t, fileInst.set, fileInst.reloads, path, 11, withFileClock(clk))
	redisInst := newInstance(t, path)
	watch(t, redisInst.set, b, prefix, WithFallbackFile(path))

	assert.Equal(t, redisLoad(11, "9/s"), nextReload(t, redisInst.reloads), "Redis is followed")
	assert.Contains(t, redisInst.log.String(), `msg="ratewarden: the rules in force differ from the rules in redis; following redis" in_force="version 11, digest `+
		ShortDigest(redisLoad(11, "1/s").Digest)+`" redis="version 11, digest `+ShortDigest(redisLoad(11, "9/s").Digest)+`"`)
	assert.Equal(t, Identity{Version: 11, Digest: redisLoad(11, "1/s").Digest}, fileInst.set.Identity())
	assert.Equal(t, Identity{Version: 11, Digest: redisLoad(11, "9/s").Digest}, redisInst.set.Identity())

	// The operator edits the file to Redis's rules without raising the
	// version: the file instance refuses, and so does a push of the file.
	clk.Advance(absentGrace)
	renameOverFile(t, path, []byte(redisDoc(11, "5/s")))
	r := nextFileReport(t, fileInst.reloads)
	require.ErrorIs(t, r.Err, ErrVersionConflict)
	assert.Equal(t, "ratewarden: same rules version, other rules: "+path+": version 11 is the version in force, with other rules (digest "+
		ShortDigest(redisLoad(11, "1/s").Digest)+" in force, "+ShortDigest(redisLoad(11, "5/s").Digest)+" here): raise the version to change the rules", r.Err.Error())
	assert.Equal(t, redisLoad(11, "1/s").Digest, fileInst.set.Digest(), "the rules in force stay")
	_, err := PushRules(context.Background(), b, []byte(redisDoc(11, "5/s")), WithRedisPrefix(prefix))
	require.ErrorIs(t, err, ErrVersionConflict)
	assert.Equal(t, redisLoad(11, "9/s").Digest, redisInst.set.Digest())

	// Version 12: the file loads, the push is followed; one identity.
	clk.Advance(absentGrace)
	renameOverFile(t, path, []byte(redisDoc(12, "5/s")))
	require.Equal(t, int64(0), int64(awaitFileLoad(t, fileInst.set, fileInst.reloads, 11, 12)))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = PushRules(context.Background(), b, raw, WithRedisPrefix(prefix))
	require.NoError(t, err)
	assert.Equal(t, redisLoad(12, "5/s"), nextReload(t, redisInst.reloads))
	assert.Equal(t, fileInst.set.Identity(), redisInst.set.Identity())
	require.NoError(t, fw.Close())
}

// syncBuffer is a bytes.Buffer safe for the watchers' goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
