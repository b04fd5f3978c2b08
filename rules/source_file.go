package rules

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/ratewarden/ratewarden/core"
)

// FileWatcher keeps a Set loaded from a rules file: every change of the file
// is loaded into the Set (Set.Load, with the file's path as the source), so
// the rules change without a redeploy. WatchFile starts one; Close stops it.
//
// It watches the file's folder, not the file, and follows symlinks, so it
// sees the three ways files change in practice:
//
//   - an editor or tool that writes a new file and renames it over the old
//     one (vim, sed -i, most configuration tools): the new file is loaded;
//   - a rewrite in place (truncate, then one or more writes): each state read
//     is loaded or refused on its own, so a half-written file is refused as
//     any invalid document is (Set.Load's error, the reload hook, the log),
//     the rules in force stay, and the complete file is loaded once written;
//   - a Kubernetes ConfigMap or Secret volume, where the file is a symlink
//     through "..data", which the kubelet swaps atomically to a new
//     timestamped folder: the swap is loaded.
//
// Only a change of the file's bytes loads: a SHA-256 of the bytes is compared
// with the last loaded, so the several events of one save load once, and
// editor swap and backup files beside it (".rules.yaml.swp", "rules.yaml~",
// vim's "4913") never load anything. A file that disappears leaves the rules
// in force; once it has stayed unreadable for half a second this is reported
// once (the reload hook and the log hear an error wrapping ErrFileUnreadable),
// and the file is loaded again when it comes back. An empty file gets the
// same half second before it is refused, since editors that write a new file
// (vim) leave it empty for a moment.
//
// Every load after the first is checked for the document's identity
// (Identity, as Set.Load checks it): a file of the version in force with
// other rules is refused (ErrVersionConflict), and so is a file older than
// the rules in force (ErrDowngrade) unless WithFileDowngrades allows it; the
// refusal reaches the reload hook and the log, and the rules in force stay.
// The first load (WatchFile's) takes the file whatever the Set was built
// with. A rewrite in place can show the watcher the first part of the new
// file, and that part can parse: on a change of the file within half a
// second of a load on a change, a file of the same version with other rules
// is taken as the rest of that write and loaded, with a warning in the log
// (Reload, the operator's, has no such grace).
//
// Where the system cannot watch (fsnotify is unavailable, the inotify limits
// are reached, the folder is gone) the watcher polls the file every
// DefaultFilePollInterval until it can watch again; WithFilePollInterval makes
// it poll always, for network filesystems whose changes raise no event.
//
// A FileWatcher is safe for concurrent use. Its goroutine runs until Close.
type FileWatcher struct {
	set    *Set
	source string // the path as given: the source Set.Load reports
	path   string // absolute and clean: what fsnotify's events name
	cfg    fileConfig

	// notify is nil when the system cannot watch at all. It, watched,
	// resolved and poll belong to the watcher's goroutine once it runs.
	notify   *fsnotify.Watcher
	watched  map[string]bool // folders notify watches
	resolved string          // what path resolved to at the last look; "" when it did not
	poll     *time.Ticker    // nil while no polling is needed

	mu       sync.Mutex // serialises reads and loads (the goroutine's, Reload's)
	last     [sha256.Size]byte
	loaded   bool        // last holds the bytes of the last load
	started  bool        // the first load is done: later loads are checked (admit)
	lastLoad time.Time   // when a load on a change of the file last took effect; zero after WatchFile's or Reload's
	failing  time.Time   // since when the file is unreadable or empty; zero otherwise
	reported string      // the read error last reported, so that it is reported once
	grace    *time.Timer // fires absentGrace after failing, to look again

	closed atomic.Bool
	done   chan struct{} // closed by Close
	exited chan struct{} // closed when the goroutine ends
}

// WatchFile loads the rules file at path into s, then watches it and loads
// every change (see FileWatcher) until Close. The first load's error is
// returned, and then nothing is watched: an unreadable file (wrapping
// ErrFileUnreadable) or the error of s.Load (a *Problems wrapping
// ErrInvalidRules for an invalid document). An error wrapping
// core.ErrInvalidOption reports a nil Set, an empty path or a bad option.
//
// WatchFile reads at most MaxDocumentSize+1 bytes of the file; the parser
// refuses a larger document. s's reload hook (WithReloadHook) hears of every
// load and of an unreadable file; it runs on the watcher's goroutine, and
// must not call Reload or Close.
func WatchFile(s *Set, path string, opts ...FileOption) (*FileWatcher, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: WatchFile: nil Set", core.ErrInvalidOption)
	}
	if path == "" {
		return nil, fmt.Errorf("%w: WatchFile: empty path", core.ErrInvalidOption)
	}
	cfg, err := newFileConfig(opts)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFileUnreadable, err)
	}
	w := &FileWatcher{
		set: s, source: path, path: abs, cfg: cfg,
		watched: map[string]bool{},
		grace:   time.NewTimer(absentGrace),
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
	}
	w.grace.Stop()
	w.startNotify()
	// Watch first, then read: a change made while the first load runs
	// raises an event and is loaded next.
	w.resolve()
	w.syncWatches()
	w.mu.Lock()
	err = w.check(true)
	w.mu.Unlock()
	if err != nil {
		w.stop()
		return nil, err
	}
	go w.run()
	return w, nil
}

// Reload reads the file and loads it now, changed or not, and returns what
// loading it returned: the operator's SIGHUP (signal.Notify, then Reload on
// every signal). An unreadable file returns an error wrapping
// ErrFileUnreadable, and is reported, while the rules in force stay. After
// Close, it returns ErrWatcherClosed.
func (w *FileWatcher) Reload() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		return ErrWatcherClosed
	}
	return w.check(true)
}

// Close stops watching: it ends the watcher's goroutine and waits for it, so
// no load starts after Close returns. The rules in force stay. A second Close
// returns ErrWatcherClosed.
func (w *FileWatcher) Close() error {
	if !w.closed.CompareAndSwap(false, true) {
		return ErrWatcherClosed
	}
	close(w.done)
	<-w.exited
	w.mu.Lock() // a Reload under way ends first
	defer w.mu.Unlock()
	w.stop()
	return nil
}

// stop releases what the watcher holds besides its goroutine.
func (w *FileWatcher) stop() {
	w.grace.Stop()
	if w.poll != nil {
		w.poll.Stop()
	}
	if w.notify != nil {
		_ = w.notify.Close() // its only error is one of its own goroutine's, ended by now
	}
}

// run is the watcher's goroutine: it waits for events, the poll ticker and
// the grace timer, until Close.
func (w *FileWatcher) run() {
	defer close(w.exited)
	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w.notify != nil {
			events, errs = w.notify.Events, w.notify.Errors
		}
		var tick <-chan time.Time
		if w.poll != nil {
			tick = w.poll.C
		}
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			if !ok {
				w.notifyLost()
				continue
			}
			w.onEvent(ev)
		case err, ok := <-errs:
			if !ok {
				w.notifyLost()
				continue
			}
			// Events may have been lost (an overflowed queue): look again.
			w.set.Logger().Warn("ratewarden: watching the rules file failed; reading it again",
				"path", w.source, "err", err)
			w.changed()
		case <-tick:
			w.changed()
		case <-w.grace.C:
			w.changed()
		}
	}
}

// onEvent looks at the file again when ev can have changed what path reads:
// an event on the file itself or on the file it resolved to, any event after
// which path resolves elsewhere (a ConfigMap's "..data" swap), or the loss of
// a watched folder. Other files of the folder are not read.
func (w *FileWatcher) onEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if w.watched[name] && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		delete(w.watched, name) // the kernel dropped the watch with the folder
	}
	was := w.resolved
	moved := w.resolve()
	if moved || name == w.path || name == w.resolved || name == was || !w.watched[filepath.Dir(w.path)] {
		w.changed()
	}
}

// changed brings the watches up to date, then loads the file if its bytes
// changed.
func (w *FileWatcher) changed() {
	w.resolve()
	w.syncWatches()
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.check(false) // reported by Set.Load, or by check, to the hook and the log
}

// check reads the file and loads it when its bytes differ from the last load,
// or always when now is true (the first load, Reload). A file that cannot be
// read, or is empty (an editor between its truncate and its write), is given
// absentGrace to come back before it is reported, or refused as an empty
// document, once; when now is true, at once. It runs with w.mu held.
func (w *FileWatcher) check(now bool) error {
	raw, err := readDocumentFile(w.path)
	if err != nil {
		return w.unreadable(err, now)
	}
	w.reported = ""
	if len(raw) == 0 && !now && !w.settled() {
		return nil
	}
	w.failing = time.Time{}
	w.grace.Stop()
	sum := sha256.Sum256(raw)
	if !now && w.loaded && sum == w.last {
		return nil
	}
	w.last, w.loaded = sum, true
	at := w.cfg.now() // before the load: its report may be heard at once
	err = w.set.Load(raw, w.source, w.loadOptions(now)...)
	w.started = true
	switch {
	case err == nil && !now:
		w.lastLoad = at
	case err == nil:
		w.lastLoad = time.Time{} // a whole file, loaded on demand
	}
	return err
}

// loadOptions are the identity rules of the next load (see FileWatcher):
// the first takes the file whatever the Set held; a document of the version
// in force with other rules is refused, but on a change of the file within
// absentGrace of a load on a change (a rewrite in place whose first writes
// happened to parse); an older one is refused unless WithFileDowngrades
// allows it. onDemand is true for WatchFile's load and Reload's.
func (w *FileWatcher) loadOptions(onDemand bool) []LoadOption {
	if !w.started {
		return []LoadOption{initial()}
	}
	opts := []LoadOption{rest(!onDemand && !w.lastLoad.IsZero() && w.cfg.now().Sub(w.lastLoad) < absentGrace)}
	if w.cfg.downgrade {
		opts = append(opts, AllowDowngrade())
	}
	return opts
}

// unreadable handles a failed read (see check).
func (w *FileWatcher) unreadable(err error, now bool) error {
	w.loaded = false // the file that comes back loads, even if unchanged
	if !now && (!w.settled() || err.Error() == w.reported) {
		return err
	}
	w.reported = err.Error()
	w.set.ReportRefusal(w.source, err)
	return err
}

// settled reports whether the file has been unreadable or empty for
// absentGrace. The first look starts the grace, and the timer that looks
// again when it ends.
func (w *FileWatcher) settled() bool {
	if w.failing.IsZero() {
		w.failing = time.Now()
		w.grace.Reset(absentGrace)
		return false
	}
	return time.Since(w.failing) >= absentGrace
}
