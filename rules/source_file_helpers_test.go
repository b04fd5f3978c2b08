package rules

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/stretchr/testify/require"
)

// fileReportGuard bounds every wait for a reload report. It is a guard against a
// watcher that never reports, not a timing: reaching it fails the test.
const fileReportGuard = 10 * time.Second

// fileTestDoc is a valid rules document of version v with one policy named
// policy under limit ("5/m").
func fileTestDoc(v int64, policy, limit string) []byte {
	return fmt.Appendf(nil, "schema: 1\nversion: %d\npolicies:\n  - name: %s\n    limits: [%s]\n", v, policy, limit)
}

// fileDocVersion is fileTestDoc of version v with a policy and limit of its own.
func fileDocVersion(v int64) []byte {
	return fileTestDoc(v, fmt.Sprintf("p%d", v), fmt.Sprintf("%d/m", v))
}

// invalidFileDoc is a document the parser refuses: it has no policy.
func invalidFileDoc() []byte { return []byte("schema: 1\nversion: 2\npolicies: []\n") }

// newFileTestSet returns a Set built from initial on a fresh memory store,
// and the channel its reload hook reports to (buffered: the hook must not
// block).
func newFileTestSet(t *testing.T, initial []byte) (*Set, chan Reload) {
	t.Helper()
	doc, err := Parse(initial, "initial")
	require.NoError(t, err)
	store, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	reports := make(chan Reload, 1024)
	set, err := New(store, doc,
		WithReloadHook(func(r Reload) { reports <- r }),
		WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	return set, reports
}

// startFileWatcher starts a watcher of path on set and stops it when the test ends.
// It consumes the first load's report, which must be version want's.
func startFileWatcher(t *testing.T, set *Set, reports chan Reload, path string, want int64, opts ...FileOption) *FileWatcher {
	t.Helper()
	w, err := WatchFile(set, path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			require.ErrorIs(t, err, ErrWatcherClosed) // the test closed it itself
		}
	})
	r := nextFileReport(t, reports)
	require.NoError(t, r.Err)
	require.Equal(t, want, r.Version)
	require.Equal(t, path, r.Source)
	return w
}

// nextFileReport returns the next report, failing the test after fileReportGuard.
func nextFileReport(t *testing.T, reports <-chan Reload) Reload {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(fileReportGuard):
		t.Fatalf("no reload reported within %v", fileReportGuard)
		return Reload{}
	}
}

// awaitFileLoad waits for the load of version want and returns how many
// refusals came before it. Every report before it must be a refusal that
// left the rules in force (version inForce): no other document may load in
// between, and none may load twice.
func awaitFileLoad(t *testing.T, set *Set, reports <-chan Reload, inForce, want int64) (refused int) {
	t.Helper()
	for {
		r := nextFileReport(t, reports)
		if r.Err == nil {
			require.Equal(t, want, r.Version, "the document loaded")
			require.Equal(t, want, set.Version())
			return refused
		}
		require.Equal(t, inForce, r.Version, "a refusal leaves the rules in force: %v", r.Err)
		refused++
	}
}

// renameOverFile writes data to a temporary file beside path and renames it
// over path, as most tools save.
func renameOverFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o644))
	require.NoError(t, os.Rename(tmp, path))
}
