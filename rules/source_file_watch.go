package rules

import (
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// startNotify opens the system's file watcher, or, where there is none to
// be had (fsnotify unsupported, the inotify instances exhausted), starts
// polling in its place.
func (w *FileWatcher) startNotify() {
	if !w.cfg.noNotify {
		n, err := fsnotify.NewWatcher()
		if err == nil {
			w.notify = n
		} else {
			w.set.Logger().Warn("ratewarden: cannot watch the rules file; polling it instead",
				"path", w.source, "every", w.cfg.fallbackInterval(), "err", err)
		}
	}
	if w.notify == nil || w.cfg.poll > 0 {
		w.setPolling(w.cfg.fallbackInterval())
	}
}

// notifyLost polls in place of a system watcher that stopped on its own
// (its channels closed), which leaves the watcher's goroutine nothing to hear.
func (w *FileWatcher) notifyLost() {
	w.set.Logger().Warn("ratewarden: the system stopped watching the rules file; polling it instead",
		"path", w.source, "every", w.cfg.fallbackInterval())
	_ = w.notify.Close() // already closed: nothing to report
	w.notify = nil
	w.watched = map[string]bool{}
	if w.poll == nil {
		w.setPolling(w.cfg.fallbackInterval())
	}
}

// resolve records what path resolves to now, following every symlink, and
// reports whether that changed since the last look. A path that does not
// resolve (the file is gone) resolves to "".
func (w *FileWatcher) resolve() bool {
	resolved, err := filepath.EvalSymlinks(w.path)
	if err != nil {
		resolved = ""
	}
	moved := resolved != w.resolved
	w.resolved = resolved
	return moved
}

// syncWatches watches the folders whose events can change what path reads:
// path's own folder, where editors rename and ConfigMaps swap, and the folder
// of the file it resolves to, where that file is rewritten. Folders no longer
// needed are let go. While a folder cannot be watched (the inotify watch limit
// is reached, the folder is gone), the watcher polls.
func (w *FileWatcher) syncWatches() {
	if w.notify == nil {
		return
	}
	want := map[string]bool{filepath.Dir(w.path): true}
	if w.resolved != "" {
		want[filepath.Dir(w.resolved)] = true
	}
	for dir := range w.watched {
		if !want[dir] {
			// An error means the watch went with its folder: nothing to let go.
			_ = w.notify.Remove(dir)
			delete(w.watched, dir)
		}
	}
	var failed error
	for dir := range want {
		if w.watched[dir] {
			continue
		}
		if err := w.notify.Add(dir); err != nil {
			failed = err
			continue
		}
		w.watched[dir] = true
	}
	switch {
	case failed != nil && w.poll == nil:
		w.set.Logger().Warn("ratewarden: cannot watch the rules file's folder; polling the file until it can",
			"path", w.source, "every", w.cfg.fallbackInterval(), "err", failed)
		w.setPolling(w.cfg.fallbackInterval())
	case failed == nil && w.poll != nil && w.cfg.poll == 0:
		w.setPolling(0) // watching again: the fallback is over
	}
}

// setPolling polls every d, or stops polling when d is 0.
func (w *FileWatcher) setPolling(d time.Duration) {
	if w.poll != nil {
		w.poll.Stop()
		w.poll = nil
	}
	if d > 0 {
		w.poll = time.NewTicker(d)
	}
}
