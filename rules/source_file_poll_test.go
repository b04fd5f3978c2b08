package rules

import (
	"io/fs"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The polling tests run in a testing/synctest bubble, whose clock moves only
// when every goroutine in it waits: fsnotify's reader waits in a system call,
// which the bubble cannot see, so these watchers poll only (withoutNotify),
// as one does where the system cannot watch.

// takeFileReports returns the reports sent so far, without waiting.
func takeFileReports(reports <-chan Reload) []Reload {
	var out []Reload
	for {
		select {
		case r := <-reports:
			out = append(out, r)
		default:
			return out
		}
	}
}

// TestWatchFilePollInterval polls at the interval: a change is loaded at the
// first tick after it and not before, and an unchanged file never loads
// again.
func TestWatchFilePollInterval(t *testing.T) {
	tests := []struct {
		name     string
		opts     []FileOption
		interval time.Duration
	}{
		{"the default while the system cannot watch", []FileOption{withoutNotify()}, DefaultFilePollInterval},
		{"WithFilePollInterval", []FileOption{withoutNotify(), WithFilePollInterval(time.Minute)}, time.Minute},
		{"the shortest interval", []FileOption{withoutNotify(), WithFilePollInterval(minPollInterval)}, minPollInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
				set, reports := newFileTestSet(t, fileDocVersion(1))
				startFileWatcher(t, set, reports, path, 1, tt.opts...)

				renameOverFile(t, path, fileDocVersion(2))
				time.Sleep(tt.interval - time.Nanosecond)
				synctest.Wait()
				assert.Empty(t, takeFileReports(reports), "no tick yet")
				assert.Equal(t, int64(1), set.Version())

				time.Sleep(time.Nanosecond)
				synctest.Wait()
				got := takeFileReports(reports)
				require.Len(t, got, 1)
				require.NoError(t, got[0].Err)
				assert.Equal(t, int64(2), got[0].Version)
				assert.Equal(t, int64(2), set.Version())

				time.Sleep(100 * tt.interval)
				synctest.Wait()
				assert.Empty(t, takeFileReports(reports), "an unchanged file never loads again")
			})
		})
	}
}

// TestWatchFilePollReportsOnce keeps an invalid file, then no file, in place
// for many polls: each is reported once, not at every poll, while the rules
// in force stay; the file that comes back is loaded.
func TestWatchFilePollReportsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
		set, reports := newFileTestSet(t, fileDocVersion(1))
		startFileWatcher(t, set, reports, path, 1, withoutNotify(), WithFilePollInterval(time.Second))

		renameOverFile(t, path, invalidFileDoc())
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got := takeFileReports(reports)
		require.Len(t, got, 1, "an invalid file is refused once")
		require.ErrorIs(t, got[0].Err, ErrInvalidRules)
		assert.Equal(t, int64(1), got[0].Version)

		require.NoError(t, os.Remove(path))
		time.Sleep(time.Second) // the poll that finds it gone
		synctest.Wait()
		assert.Empty(t, takeFileReports(reports), "gone for less than the grace: no news yet")
		time.Sleep(absentGrace)
		synctest.Wait()
		got = takeFileReports(reports)
		require.Len(t, got, 1)
		require.ErrorIs(t, got[0].Err, ErrFileUnreadable)
		require.ErrorIs(t, got[0].Err, fs.ErrNotExist)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Empty(t, takeFileReports(reports), "a missing file is reported once")
		assert.Equal(t, int64(1), set.Version())

		// It comes back with the content it had when it went: still news,
		// since the operator heard it was gone.
		renameOverFile(t, path, invalidFileDoc())
		time.Sleep(time.Second)
		synctest.Wait()
		got = takeFileReports(reports)
		require.Len(t, got, 1)
		require.ErrorIs(t, got[0].Err, ErrInvalidRules)

		renameOverFile(t, path, fileDocVersion(3))
		time.Sleep(time.Second)
		synctest.Wait()
		got = takeFileReports(reports)
		require.Len(t, got, 1)
		require.NoError(t, got[0].Err)
		assert.Equal(t, int64(3), set.Version())
	})
}

// TestWatchFilePollTransientStates leaves the file gone or empty for a
// moment, as vim's save does, then for good: a moment within the grace is no
// news, and a state that stays is reported once.
func TestWatchFilePollTransientStates(t *testing.T) {
	tests := []struct {
		name  string
		enter func(t *testing.T, path string)
		is    error
	}{
		{"renamed away", func(t *testing.T, path string) {
			require.NoError(t, os.Rename(path, path+"~"))
		}, fs.ErrNotExist},
		{"emptied", func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 0))
		}, ErrInvalidRules},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
				set, reports := newFileTestSet(t, fileDocVersion(1))
				startFileWatcher(t, set, reports, path, 1, withoutNotify(), WithFilePollInterval(100*time.Millisecond))

				tt.enter(t, path)
				time.Sleep(absentGrace) // polls that see it, within the grace
				synctest.Wait()
				require.NoError(t, os.WriteFile(path, fileDocVersion(2), 0o644))
				time.Sleep(time.Minute)
				synctest.Wait()
				got := takeFileReports(reports)
				require.Len(t, got, 1, "only the new document is news")
				require.NoError(t, got[0].Err)
				assert.Equal(t, int64(2), got[0].Version)

				tt.enter(t, path)
				time.Sleep(time.Minute)
				synctest.Wait()
				got = takeFileReports(reports)
				require.Len(t, got, 1, "a state that stays is reported once")
				require.ErrorIs(t, got[0].Err, tt.is)
				assert.Equal(t, int64(2), set.Version())
			})
		})
	}
}

// TestWatchFileClose closes the watcher: its goroutine ends (the bubble
// would not end otherwise), no change loads afterwards, and Reload and a
// second Close say it is closed.
func TestWatchFileClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
		set, reports := newFileTestSet(t, fileDocVersion(1))
		w := startFileWatcher(t, set, reports, path, 1, withoutNotify(), WithFilePollInterval(time.Second))

		require.NoError(t, w.Close())
		renameOverFile(t, path, fileDocVersion(2))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Empty(t, takeFileReports(reports))
		assert.Equal(t, int64(1), set.Version())
		require.ErrorIs(t, w.Reload(), ErrWatcherClosed)
		require.ErrorIs(t, w.Close(), ErrWatcherClosed)
		assert.Empty(t, takeFileReports(reports))
	})
}
