package rules

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatchFileBadArguments gives WatchFile what it cannot use: a clear
// error wrapping core.ErrInvalidOption, never a panic, and the rules in force
// stay.
func TestWatchFileBadArguments(t *testing.T) {
	path := writeRulesFile(t, t.TempDir(), fileDocVersion(2))
	set, _ := newFileTestSet(t, fileDocVersion(1))
	tests := []struct {
		name string
		set  *Set
		path string
		opts []FileOption
		want string
	}{
		{"nil Set", nil, path, nil, "nil Set"},
		{"empty path", set, "", nil, "empty path"},
		{"nil option", set, path, []FileOption{nil}, "nil file option"},
		{"zero poll interval", set, path, []FileOption{WithFilePollInterval(0)}, "WithFilePollInterval: poll interval 0s out of [10ms, 24h0m0s]"},
		{"negative poll interval", set, path, []FileOption{WithFilePollInterval(-time.Second)}, "poll interval -1s out of"},
		{"poll interval below the shortest", set, path, []FileOption{WithFilePollInterval(time.Millisecond)}, "poll interval 1ms out of"},
		{"poll interval of a nanosecond", set, path, []FileOption{WithFilePollInterval(time.Nanosecond)}, "poll interval 1ns out of"},
		{"poll interval above the longest", set, path, []FileOption{WithFilePollInterval(25 * time.Hour)}, "poll interval 25h0m0s out of"},
		{"a bad option after good ones", set, path, []FileOption{WithFilePollInterval(time.Second), WithFilePollInterval(0)}, "poll interval 0s out of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := WatchFile(tt.set, tt.path, tt.opts...)
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, w)
			assert.Equal(t, int64(1), set.Version())
		})
	}
}

// TestWatchFileBadFiles starts watching files that cannot be loaded: the
// first load's error is returned, nothing is watched, the rules in force
// stay, and the reload hook hears of it.
func TestWatchFileBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	require.NoError(t, os.Symlink("nowhere.yaml", filepath.Join(dir, "dangling.yaml")))
	tests := []struct {
		name string
		path string
		is   []error
	}{
		{"a missing file", filepath.Join(dir, "missing.yaml"), []error{ErrFileUnreadable, fs.ErrNotExist}},
		{"a missing folder", filepath.Join(dir, "no", "such", "rules.yaml"), []error{ErrFileUnreadable, fs.ErrNotExist}},
		{"a dangling symlink", filepath.Join(dir, "dangling.yaml"), []error{ErrFileUnreadable, fs.ErrNotExist}},
		{"a folder", dir, []error{ErrFileUnreadable}},
		{"an empty file", write("empty.yaml", nil), []error{ErrInvalidRules}},
		{"not YAML", write("garbage.yaml", []byte("\x00\xff{{[[: :\n\t-")), []error{ErrInvalidRules}},
		{"an invalid document", write("invalid.yaml", invalidFileDoc()), []error{ErrInvalidRules}},
		{"a file larger than a document may be", write("huge.yaml", bytes.Repeat([]byte("# padding\n"), MaxDocumentSize/5)), []error{ErrInvalidRules}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, reports := newFileTestSet(t, fileDocVersion(1))
			w, err := WatchFile(set, tt.path)
			assert.Nil(t, w)
			for _, target := range tt.is {
				require.ErrorIs(t, err, target)
			}
			r := nextFileReport(t, reports)
			assert.Equal(t, err, r.Err, "the hook hears the error WatchFile returns")
			assert.Equal(t, tt.path, r.Source)
			assert.Equal(t, int64(1), r.Version)
			assert.Equal(t, int64(1), set.Version())
		})
	}
}
