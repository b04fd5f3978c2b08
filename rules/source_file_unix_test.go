//go:build unix

package rules

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatchFileNotRegular points WatchFile at files that are no documents
// and that a plain read would hang on (a FIFO waits for a writer, /dev/zero
// never ends): refused at once.
func TestWatchFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	tests := []struct{ name, path string }{
		{"a FIFO", fifo},
		{"a device", "/dev/zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, _ := newFileTestSet(t, fileDocVersion(1))
			w, err := WatchFile(set, tt.path)
			assert.Nil(t, w)
			require.ErrorIs(t, err, ErrFileUnreadable)
			assert.ErrorContains(t, err, "not a regular file")
		})
	}
}
