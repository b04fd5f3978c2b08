package rules

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// fileDigest is the digest of a rules document's text.
func fileDigest(t *testing.T, raw []byte) string {
	t.Helper()
	doc, err := Parse(raw, "test")
	require.NoError(t, err)
	return doc.Digest()
}

// fileSaves are the two ways a file changes in place of another: renamed
// over (editors, most tools) and rewritten in place (truncate, write).
var fileSaves = map[string]func(t *testing.T, path string, data []byte){
	"rename over": renameOverFile,
	"in place": func(t *testing.T, path string, data []byte) {
		require.NoError(t, os.WriteFile(path, data, 0o644))
	},
}

// watchedFile is a Set on a rules file, its reports and its watcher, whose
// loads are timed by clk.
type watchedFile struct {
	set     *Set
	reports chan Reload
	path    string
	w       *FileWatcher
	clk     *core.ManualClock
}

// watchFileOnClock starts a Set on the file v1 (policy api, 5/m) and its
// watcher on a manual clock, half a second past the first load.
func watchFileOnClock(t *testing.T, opts ...FileOption) watchedFile {
	t.Helper()
	first := fileTestDoc(1, "api", "5/m")
	f := watchedFile{path: writeRulesFile(t, t.TempDir(), first), clk: core.NewManualClock(core.SystemClock{}.Now())}
	f.set, f.reports = newFileTestSet(t, first)
	f.w = startFileWatcher(t, f.set, f.reports, f.path, 1, append([]FileOption{withFileClock(f.clk)}, opts...)...)
	f.clk.Advance(absentGrace)
	return f
}

// A file of the version in force with other rules is refused, however it is
// saved and on SIGHUP too; the rules in force stay, and the report names
// them. The same rules written otherwise (JSON, comments, key order) are the
// same document: they load, and nothing changes.
func TestWatchFileSameVersionOtherRules(t *testing.T) {
	for name, save := range fileSaves {
		t.Run(name, func(t *testing.T) {
			f := watchFileOnClock(t)
			set, reports, path, w := f.set, f.reports, f.path, f.w
			inForce := set.Digest()

			save(t, path, fileTestDoc(1, "api", "6/m"))
			r := nextFileReport(t, reports)
			require.ErrorIs(t, r.Err, ErrVersionConflict)
			assert.Contains(t, r.Err.Error(), path+": version 1 is the version in force, with other rules (digest "+
				ShortDigest(inForce)+" in force, "+ShortDigest(fileDigest(t, fileTestDoc(1, "api", "6/m")))+" here)")
			assert.Equal(t, Reload{Source: path, Version: 1, Digest: inForce, Err: r.Err}, r)
			assert.Equal(t, inForce, set.Digest())
			assert.Equal(t, []core.Limit{core.PerMinute(5)}, set.Document().Policies[0].Limits)
			require.ErrorIs(t, w.Reload(), ErrVersionConflict, "SIGHUP refuses it too")
			require.ErrorIs(t, nextFileReport(t, reports).Err, ErrVersionConflict)

			save(t, path, []byte("# the rules in force, in JSON\n{\"policies\": [{\"limits\": [\"5/m\"], \"name\": \"api\"}], \"version\": 1, \"schema\": 1}\n"))
			r = nextFileReport(t, reports)
			require.NoError(t, r.Err)
			assert.Equal(t, inForce, r.Digest, "one identity")
		})
	}
}

// A file older than the rules in force is refused, unless the watcher
// allows downgrades; a downgrade allowed still refuses the version in force
// with other rules.
func TestWatchFileDowngrade(t *testing.T) {
	for name, save := range fileSaves {
		t.Run(name, func(t *testing.T) {
			f := watchFileOnClock(t)
			set, reports, path := f.set, f.reports, f.path
			save(t, path, fileTestDoc(3, "api", "7/m"))
			require.Equal(t, 0, awaitFileLoad(t, set, reports, 1, 3))
			v3 := set.Digest()
			save(t, path, fileTestDoc(2, "api", "5/m"))
			r := nextFileReport(t, reports)
			require.ErrorIs(t, r.Err, ErrDowngrade)
			assert.Equal(t, "ratewarden: rules version older than the one in force: "+path+": version 2 is older than version 3 in force (digest "+
				ShortDigest(v3)+"): raise the version, or allow the downgrade (rules.AllowDowngrade, rules.WithFileDowngrades)", r.Err.Error())
			assert.Equal(t, int64(3), set.Version())
		})
	}
	f := watchFileOnClock(t, WithFileDowngrades())
	renameOverFile(t, f.path, fileTestDoc(3, "api", "7/m"))
	require.Equal(t, 0, awaitFileLoad(t, f.set, f.reports, 1, 3))
	renameOverFile(t, f.path, fileTestDoc(2, "api", "5/m"))
	require.Equal(t, 0, awaitFileLoad(t, f.set, f.reports, 3, 2), "allowed")
	f.clk.Advance(absentGrace)
	renameOverFile(t, f.path, fileTestDoc(2, "api", "9/m"))
	require.ErrorIs(t, nextFileReport(t, f.reports).Err, ErrVersionConflict)
}

// Within half a second of a load, a file of the same version with other
// rules is the rest of a rewrite in place whose first part parsed: it loads,
// and the log says so. An older file is refused even then.
func TestWatchFileRestOfARewrite(t *testing.T) {
	first := fileTestDoc(1, "api", "5/m")
	path := writeRulesFile(t, t.TempDir(), first)
	set, reports := newFileTestSet(t, first)
	clk := core.NewManualClock(core.SystemClock{}.Now())
	startFileWatcher(t, set, reports, path, 1, withFileClock(clk))
	renameOverFile(t, path, fileTestDoc(3, "api", "5/m"))
	require.Equal(t, 0, awaitFileLoad(t, set, reports, 1, 3))
	whole := append(fileTestDoc(3, "api", "5/m"), "  - {name: more, limits: [1/s]}\n"...)
	require.NoError(t, os.WriteFile(path, whole, 0o644))
	r := nextFileReport(t, reports)
	require.NoError(t, r.Err)
	assert.Equal(t, fileDigest(t, whole), r.Digest)
	require.NoError(t, os.WriteFile(path, fileTestDoc(2, "api", "5/m"), 0o644))
	require.ErrorIs(t, nextFileReport(t, reports).Err, ErrDowngrade)
}

// WatchFile's first load takes the file whatever the Set was built with
// (a built-in default of the same version, or a newer one).
func TestWatchFileFirstLoadTakesTheFile(t *testing.T) {
	for name, builtIn := range map[string][]byte{
		"same version": fileTestDoc(1, "all", "100/m"),
		"newer":        fileTestDoc(9, "all", "100/m"),
	} {
		t.Run(name, func(t *testing.T) {
			file := fileTestDoc(1, "api", "5/m")
			path := writeRulesFile(t, t.TempDir(), file)
			set, reports := newFileTestSet(t, builtIn)
			startFileWatcher(t, set, reports, path, 1)
			assert.Equal(t, fileDigest(t, file), set.Digest())
		})
	}
}

// Set.Load and Set.Replace refuse a conflict and a downgrade on their own,
// and AllowDowngrade lets the downgrade through; the observers that
// implement RulesObserver hear every document that takes effect.
func TestSetLoadIdentity(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := Parse(fileTestDoc(2, "api", "5/m"), "built-in")
	require.NoError(t, err)
	obs := &rulesRecorder{}
	s, err := New(st, doc, WithObserver(obs), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	assert.Equal(t, []Identity{{Version: 2, Digest: doc.Digest()}}, obs.seen)
	assert.Equal(t, Identity{Version: 2, Digest: doc.Digest()}, s.Identity())

	require.NoError(t, s.Load(fileTestDoc(2, "api", "5/m"), "again"), "the rules in force again: no error")
	require.ErrorIs(t, s.Load(fileTestDoc(2, "api", "6/m"), "edit"), ErrVersionConflict)
	require.ErrorIs(t, s.Load(fileTestDoc(1, "api", "6/m"), "old"), ErrDowngrade)
	require.ErrorIs(t, s.Load(fileTestDoc(2, "api", "6/m"), "edit", AllowDowngrade()), ErrVersionConflict)
	require.ErrorIs(t, s.Load(fileTestDoc(3, "api", "6/m"), "nil", nil), core.ErrInvalidOption)
	older, err := Parse(fileTestDoc(1, "api", "6/m"), "old")
	require.NoError(t, err)
	require.ErrorIs(t, s.Replace(older, "old"), ErrDowngrade)
	require.NoError(t, s.Replace(older, "old", AllowDowngrade()))
	assert.Equal(t, []Identity{{Version: 2, Digest: doc.Digest()}, {Version: 2, Digest: doc.Digest()}, {Version: 1, Digest: older.Digest()}}, obs.seen)
	assert.Equal(t, older.Digest(), s.Digest())
}

// rulesRecorder is an httplimit.Observer that records what ObserveRules hears.
type rulesRecorder struct {
	seen []Identity
}

func (r *rulesRecorder) Observe(httplimit.Event) {}

func (r *rulesRecorder) ObserveRules(version int64, digest string) {
	r.seen = append(r.seen, Identity{Version: version, Digest: digest})
}

// TestIdentityString checks the short form people read.
func TestIdentityString(t *testing.T) {
	d := strings.Repeat("ab", 32)
	assert.Equal(t, "version 7, digest abababababab", Identity{Version: 7, Digest: d}.String())
	assert.Equal(t, "version 7", Identity{Version: 7}.String())
	assert.Equal(t, "abc", ShortDigest("abc"))
	id, ok := parseStamp("7:" + d)
	assert.True(t, ok)
	assert.Equal(t, Identity{Version: 7, Digest: d}, id)
	for _, bad := range []string{"", "7", "7:", "0:" + d, "-1:" + d, "x:" + d, "7:" + strings.ToUpper(d), "7:" + d[1:], "99999999999999999999:" + d} {
		_, ok := parseStamp(bad)
		assert.False(t, ok, bad)
	}
}
