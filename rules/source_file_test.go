package rules

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileLayout is one way a rules file lives on disk and is changed.
type fileLayout struct {
	name string
	// setup lays out the file with data in dir and returns the path to watch.
	setup func(t *testing.T, dir string, data []byte) string
	// update changes the file's content to data, as the layout's tool does.
	update func(t *testing.T, dir string, data []byte)
	// exact is true when an update never exposes a partial file, so no
	// refusal may be reported on the way.
	exact bool
}

// fileLayouts are the three ways files change in practice, and two variants.
var fileLayouts = []fileLayout{
	{
		name: "a tool renames a new file over the old one",
		setup: func(t *testing.T, dir string, data []byte) string {
			path := filepath.Join(dir, "rules.yaml")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			return path
		},
		update: func(t *testing.T, dir string, data []byte) {
			renameOverFile(t, filepath.Join(dir, "rules.yaml"), data)
		},
		exact: true,
	},
	{
		name:  "vim saves with its swap file, its 4913 probe and a backup",
		setup: writeRulesFile,
		update: func(t *testing.T, dir string, data []byte) {
			path := filepath.Join(dir, "rules.yaml")
			swap := filepath.Join(dir, ".rules.yaml.swp")
			require.NoError(t, os.WriteFile(swap, []byte("vim swap"), 0o600))
			probe := filepath.Join(dir, "4913")
			require.NoError(t, os.WriteFile(probe, nil, 0o644))
			require.NoError(t, os.Remove(probe))
			require.NoError(t, os.Rename(path, path+"~"))
			require.NoError(t, os.WriteFile(path, data, 0o644))
			require.NoError(t, os.Remove(path+"~"))
			require.NoError(t, os.Remove(swap))
		},
	},
	{
		name:  "an in-place rewrite in several writes",
		setup: writeRulesFile,
		update: func(t *testing.T, dir string, data []byte) {
			f, err := os.OpenFile(filepath.Join(dir, "rules.yaml"), os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			half := len(data) / 2
			_, err = f.Write(data[:half])
			require.NoError(t, err)
			_, err = f.Write(data[half:])
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
	},
	{
		name: "a Kubernetes ConfigMap volume swaps its ..data symlink",
		setup: func(t *testing.T, dir string, data []byte) string {
			ts := "..2026_11_26_10_00_00.000000001"
			require.NoError(t, os.Mkdir(filepath.Join(dir, ts), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ts, "rules.yaml"), data, 0o644))
			require.NoError(t, os.Symlink(ts, filepath.Join(dir, "..data")))
			require.NoError(t, os.Symlink(filepath.Join("..data", "rules.yaml"), filepath.Join(dir, "rules.yaml")))
			return filepath.Join(dir, "rules.yaml")
		},
		update: swapConfigMap,
		exact:  true,
	},
	{
		name: "a symlink to a file in another folder, renamed over there",
		setup: func(t *testing.T, dir string, data []byte) string {
			other := filepath.Join(dir, "elsewhere")
			require.NoError(t, os.Mkdir(other, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(other, "real.yaml"), data, 0o644))
			watched := filepath.Join(dir, "watched")
			require.NoError(t, os.Mkdir(watched, 0o755))
			path := filepath.Join(watched, "rules.yaml")
			require.NoError(t, os.Symlink(filepath.Join(other, "real.yaml"), path))
			return path
		},
		update: func(t *testing.T, dir string, data []byte) {
			renameOverFile(t, filepath.Join(dir, "elsewhere", "real.yaml"), data)
		},
		exact: true,
	},
}

// writeRulesFile is a setup: a regular file rules.yaml.
func writeRulesFile(t *testing.T, dir string, data []byte) string {
	path := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// swapConfigMap updates a ConfigMap volume as the kubelet does: the new
// content in a new timestamped folder, a temporary symlink to it renamed over
// ..data, then the old folder removed.
func swapConfigMap(t *testing.T, dir string, data []byte) {
	old, err := os.Readlink(filepath.Join(dir, "..data"))
	require.NoError(t, err)
	var seq int
	_, err = fmt.Sscanf(old[len(old)-9:], "%d", &seq)
	require.NoError(t, err)
	seq++
	ts := fmt.Sprintf("..2026_11_26_10_%02d_00.%09d", seq%60, seq)
	require.NoError(t, os.Mkdir(filepath.Join(dir, ts), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ts, "rules.yaml"), data, 0o644))
	require.NoError(t, os.Symlink(ts, filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, old)))
}

// TestWatchFileLayouts changes the file of every layout while the watcher
// runs: each change loads once, the rules in force change with it, editor
// files beside it load nothing, and only a layout that exposes a partial
// file may report refusals on the way.
func TestWatchFileLayouts(t *testing.T) {
	for _, l := range fileLayouts {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			path := l.setup(t, dir, fileDocVersion(1))
			set, reports := newFileTestSet(t, fileDocVersion(1))
			startFileWatcher(t, set, reports, path, 1)

			for v := int64(2); v <= 4; v++ {
				l.update(t, dir, fileDocVersion(v))
				refused := awaitFileLoad(t, set, reports, v-1, v)
				if l.exact {
					assert.Zero(t, refused, "an update that never exposes a partial file is never refused")
				}
				assert.Equal(t, fmt.Sprintf("p%d", v), set.Document().Policies[0].Name)
			}

			// Editor leftovers beside the file: the next report is the
			// next real change, with nothing before it.
			for _, name := range []string{".rules.yaml.swp", "rules.yaml~", "4913", ".rules.yaml.swx"} {
				require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), name), []byte("junk"), 0o644))
			}
			require.NoError(t, os.Remove(filepath.Join(filepath.Dir(path), "4913")))
			l.update(t, dir, fileDocVersion(5))
			refused := awaitFileLoad(t, set, reports, 4, 5)
			if l.exact {
				assert.Zero(t, refused)
			}
			assert.Empty(t, reports, "one load per change")
		})
	}
}

// TestWatchFileHalfWritten rewrites the file in place and stops half way: the
// half is refused while the rules in force stay, and the whole is loaded once
// written.
func TestWatchFileHalfWritten(t *testing.T) {
	dir := t.TempDir()
	path := writeRulesFile(t, dir, fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	startFileWatcher(t, set, reports, path, 1)

	whole := fileDocVersion(2)
	half := len("schema: 1\nversion: 2\n") // no policies yet: invalid
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(whole[:half])
	require.NoError(t, err)

	r := nextFileReport(t, reports) // the empty file or the half: refused either way
	require.ErrorIs(t, r.Err, ErrInvalidRules)
	assert.Equal(t, int64(1), r.Version, "the rules in force stay")
	assert.Equal(t, int64(1), set.Version())

	_, err = f.Write(whole[half:])
	require.NoError(t, err)
	awaitFileLoad(t, set, reports, 1, 2)
	assert.Equal(t, "p2", set.Document().Policies[0].Name)
}

// TestWatchFileRemovedAndRecreated removes the file: the removal is reported
// once and the rules in force stay; Reload says the file is gone; the file
// that comes back is loaded.
func TestWatchFileRemovedAndRecreated(t *testing.T) {
	dir := t.TempDir()
	path := writeRulesFile(t, dir, fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	w := startFileWatcher(t, set, reports, path, 1)

	require.NoError(t, os.Remove(path))
	r := nextFileReport(t, reports)
	require.ErrorIs(t, r.Err, ErrFileUnreadable)
	require.ErrorIs(t, r.Err, fs.ErrNotExist)
	assert.Equal(t, int64(1), r.Version)
	assert.Equal(t, int64(1), set.Version(), "the rules in force stay")

	err := w.Reload()
	require.ErrorIs(t, err, ErrFileUnreadable)
	require.ErrorIs(t, nextFileReport(t, reports).Err, fs.ErrNotExist, "Reload reports what it returns")

	renameOverFile(t, path, fileDocVersion(2))
	assert.Zero(t, awaitFileLoad(t, set, reports, 1, 2))
}

// TestWatchFileFolderRemoved removes the file's whole folder, which takes the
// watch with it: the watcher falls back to polling, and picks up the folder
// and file created again, which raise no event it could hear.
func TestWatchFileFolderRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := writeRulesFile(t, dir, fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	startFileWatcher(t, set, reports, path, 1)

	require.NoError(t, os.RemoveAll(dir))
	r := nextFileReport(t, reports)
	require.ErrorIs(t, r.Err, fs.ErrNotExist)

	require.NoError(t, os.Mkdir(dir, 0o755))
	renameOverFile(t, path, fileDocVersion(2))
	assert.Zero(t, awaitFileLoad(t, set, reports, 1, 2))

	// Watching again: a change is heard, not only polled.
	renameOverFile(t, path, fileDocVersion(3))
	assert.Zero(t, awaitFileLoad(t, set, reports, 2, 3))
}

// TestWatchFileReload reloads on demand: an unchanged file loads again (the
// operator asked), an invalid one returns the parser's error and leaves the
// rules in force.
func TestWatchFileReload(t *testing.T) {
	dir := t.TempDir()
	path := writeRulesFile(t, dir, fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	w := startFileWatcher(t, set, reports, path, 1)

	require.NoError(t, w.Reload())
	r := nextFileReport(t, reports)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(1), r.Version)

	renameOverFile(t, path, invalidFileDoc())
	require.ErrorIs(t, nextFileReport(t, reports).Err, ErrInvalidRules, "the watcher refused it")
	err := w.Reload()
	var problems *Problems
	require.ErrorAs(t, err, &problems)
	require.ErrorIs(t, err, ErrInvalidRules)
	require.ErrorIs(t, nextFileReport(t, reports).Err, ErrInvalidRules)
	assert.Equal(t, int64(1), set.Version())

	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Reload(), ErrWatcherClosed)
	require.ErrorIs(t, w.Close(), ErrWatcherClosed)
}

// TestWatchFileNotifierStops closes the system watcher under the
// FileWatcher, as a failing one would: it polls in its place and still
// loads the changes.
func TestWatchFileNotifierStops(t *testing.T) {
	path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	w := startFileWatcher(t, set, reports, path, 1)

	require.NoError(t, w.notify.Close())
	renameOverFile(t, path, fileDocVersion(2))
	assert.Zero(t, awaitFileLoad(t, set, reports, 1, 2))
	require.NoError(t, w.Close())
}
