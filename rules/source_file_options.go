package rules

import (
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// ErrFileUnreadable is wrapped by the errors of a rules file that cannot be
// read: it is missing, it is not a regular file, or reading it failed. The
// rules in force stay.
var ErrFileUnreadable = errors.New("ratewarden: cannot read the rules file")

// DefaultFilePollInterval is how often a FileWatcher re-reads the file while
// the system cannot tell it about changes (fsnotify cannot watch the file's
// folder: the inotify limits are reached, the folder is gone), unless
// WithFilePollInterval says otherwise.
const DefaultFilePollInterval = 2 * time.Second

// absentGrace is how long the file may stay unreadable or empty before a
// watcher reports it: an editor that renames the old file away and writes a
// new one (vim's backup) leaves no file, then an empty one, for a moment,
// which is no news.
const absentGrace = 500 * time.Millisecond

// FileOption configures WatchFile.
type FileOption func(*fileConfig) error

// fileConfig is what the file options set.
type fileConfig struct {
	// poll is the interval of WithFilePollInterval; 0 polls only while
	// the system cannot watch, every DefaultFilePollInterval.
	poll time.Duration
	// noNotify polls only, never asking fsnotify (withoutNotify).
	noNotify bool
	// downgrade loads a file older than the rules in force
	// (WithFileDowngrades).
	downgrade bool
	// clock times the loads, for the grace of a rewrite in place (see
	// FileWatcher); nil is the system's (withFileClock).
	clock core.Clock
}

// WithFileDowngrades lets a FileWatcher load a file whose version is older
// than the rules in force, which it refuses otherwise (ErrDowngrade, reported
// to the reload hook and the log), as Set.Load does without AllowDowngrade:
// for a deployment that rolls back by putting an older file in place. A file
// of the version in force with other rules is refused still.
func WithFileDowngrades() FileOption {
	return func(c *fileConfig) error {
		c.downgrade = true
		return nil
	}
}

// withFileClock times the watcher's loads by clk: the tests move past the
// grace of a rewrite in place without waiting.
func withFileClock(clk core.Clock) FileOption {
	return func(c *fileConfig) error {
		c.clock = clk
		return nil
	}
}

// now is the time by the watcher's clock.
func (c fileConfig) now() time.Time {
	if c.clock != nil {
		return c.clock.Now()
	}
	return time.Now()
}

// WithFilePollInterval makes a FileWatcher re-read the file every d besides
// watching it, for filesystems whose changes raise no event where the
// watcher runs (NFS, SMB and other network mounts changed by another machine,
// some FUSE and container overlay mounts). A re-read loads only when the
// bytes changed. Without it, the watcher polls (every
// DefaultFilePollInterval) only while the system cannot watch the file. d
// must be from 10 ms to 24 h, as WithPollInterval's for Redis.
func WithFilePollInterval(d time.Duration) FileOption {
	return func(c *fileConfig) error {
		if d < minPollInterval || d > maxPollInterval {
			return fmt.Errorf("%w: WithFilePollInterval: poll interval %s out of [%s, %s]",
				core.ErrInvalidOption, d, minPollInterval, maxPollInterval)
		}
		c.poll = d
		return nil
	}
}

// withoutNotify makes the watcher poll only, as it does when fsnotify is
// unavailable: the tests run it under testing/synctest, whose bubble cannot
// hold fsnotify's reader (a goroutine blocked in a system call is never idle,
// so the bubble's clock would never move).
func withoutNotify() FileOption {
	return func(c *fileConfig) error {
		c.noNotify = true
		return nil
	}
}

// newFileConfig applies opts.
func newFileConfig(opts []FileOption) (fileConfig, error) {
	var c fileConfig
	for _, o := range opts {
		if o == nil {
			return c, nilOption("file option")
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// fallbackInterval is how often to poll while the system cannot watch.
func (c fileConfig) fallbackInterval() time.Duration {
	if c.poll > 0 {
		return c.poll
	}
	return DefaultFilePollInterval
}
