package rules

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// RedisWatcher keeps a Set's rules in step with the document kept in Redis
// (see WatchRedis). It is safe for concurrent use; its goroutines end on
// Close.
type RedisWatcher struct {
	set *Set
	b   RedisBackend
	cfg redisConfig

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	announced  chan struct{}          // an announcement came: fetch
	subscribed chan struct{}          // a subscription was confirmed: poll
	refresh    chan chan error        // Refresh asks the loop to poll
	lastNews   atomic.Pointer[string] // the latest announcement's payload
	subMu      sync.Mutex
	subCancel  context.CancelFunc // ends the current subscription

	// Owned by the loop goroutine (and start, before it runs).
	badID   Identity // a stored document that was refused: polls skip it
	lastErr error    // the failure of the latest read or load

	stats struct{ subscriptions, announcements, polls, loads, failures atomic.Int64 }
}

// RedisWatcherStats counts what a RedisWatcher did since it started.
type RedisWatcherStats struct {
	// Subscriptions counts the subscriptions the server confirmed: 1 once
	// subscribed, one more for every resubscription.
	Subscriptions int64
	// Announcements counts the announcements received.
	Announcements int64
	// Polls counts the reads of the stored version: every poll interval,
	// after every subscription, and on Refresh.
	Polls int64
	// Loads counts the documents from Redis that took effect.
	Loads int64
	// Failures counts the reads and loads that failed: Redis down or
	// failing, no rules, garbage, a document refused.
	Failures int64
}

// WatchRedis loads the rules kept in Redis (see PushRules) into s, and keeps
// them in step until Close. At start it fetches the document and loads it
// when its identity (version and digest) differs from s.Identity(); if that fails (Redis down, no
// rules pushed yet, a document s refuses), it loads the fallback file
// (WithFallbackFile) or keeps the rules s was built with, logs that it does
// and tells s's reload hook (a Reload from RedisSource with the error), and
// keeps trying. Then it subscribes to the announcements of pushes and loads
// each announced document; since pub/sub delivers at most once, it also reads
// the stored version and digest every poll interval (WithRedisPollInterval)
// and right after every subscription, and loads the document whenever they
// differ from s.Identity(). Redis is the truth: a document older than the
// one in force, or of its version with another digest (a fallback file that
// disagrees with Redis), is loaded too, and the log says so (a warning naming
// both). A digest stored beside the text that is not the text's own is
// garbage (ErrRedisGarbage): the document is refused and the rules in force
// stay. A subscription that is lost (a node restarts, CLIENT KILL
// TYPE pubsub) is renewed, and so is one that a poll finds behind. A document
// refused once (it fails validation, or its key holds garbage) is not read
// again until its version changes or an announcement comes.
//
// Every load goes through s.Replace, so the reload hook hears each one and a
// refused document leaves the rules in force. WatchRedis returns an error
// wrapping core.ErrInvalidOption for a nil Set or backend or a bad option,
// and never for Redis's state.
func WatchRedis(s *Set, b RedisBackend, opts ...RedisOption) (*RedisWatcher, error) {
	cfg, err := newRedisConfig(opts)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, nilOption("set")
	}
	if b == nil {
		return nil, nilOption("redis backend")
	}
	w := &RedisWatcher{
		set: s, b: b, cfg: cfg,
		announced:  make(chan struct{}, 1),
		subscribed: make(chan struct{}, 1),
		refresh:    make(chan chan error),
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.start()
	w.wg.Add(2)
	go w.subscribeLoop()
	go w.loop()
	return w, nil
}

// Close stops the watcher and waits for its goroutines to end. The Set keeps
// the rules in force. Close is idempotent and returns nil.
func (w *RedisWatcher) Close() error {
	w.once.Do(func() {
		w.cancel()
		w.wg.Wait()
	})
	return nil
}

// Refresh reads the stored version now and loads the document when it
// differs from the Set's, even one refused before: for an operator's "reload
// now". It returns what failed (Redis, or the document's load), nil when the
// rules in force are Redis's, and an error wrapping ErrWatcherClosed after
// Close.
func (w *RedisWatcher) Refresh(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case w.refresh <- reply:
	case <-w.ctx.Done():
		return ErrWatcherClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns what the watcher did so far.
func (w *RedisWatcher) Stats() RedisWatcherStats {
	return RedisWatcherStats{
		Subscriptions: w.stats.subscriptions.Load(),
		Announcements: w.stats.announcements.Load(),
		Polls:         w.stats.polls.Load(),
		Loads:         w.stats.loads.Load(),
		Failures:      w.stats.failures.Load(),
	}
}

// loop runs every read and load, one at a time: at every poll interval,
// after a subscription, on an announcement and on Refresh.
func (w *RedisWatcher) loop() {
	defer w.wg.Done()
	tick := time.NewTicker(w.cfg.poll)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
			if w.poll(false) {
				w.restartSubscription() // it missed an announcement
			}
		case <-w.subscribed:
			w.poll(false)
		case <-w.announced:
			if p := w.lastNews.Load(); p == nil || *p != w.set.Identity().stamp() {
				w.fetch()
			}
		case reply := <-w.refresh:
			w.badID = Identity{}
			w.poll(true)
			reply <- w.lastErr
		}
	}
}

// poll reads the stored version and digest and, when they differ from the
// Set's (and, unless force, were not refused before), fetches and loads the
// document. It reports whether a document took effect.
func (w *RedisWatcher) poll(force bool) bool {
	defer w.stats.polls.Add(1) // once done, so that a test can wait for it
	ctx, cancel := context.WithTimeout(w.ctx, w.cfg.timeout)
	defer cancel()
	st, err := w.cfg.read(ctx, w.b, false)
	var id Identity
	if err == nil {
		id, err = w.cfg.identity(st)
	}
	if err != nil {
		w.fail(err)
		return false
	}
	switch {
	case w.inForce(id):
		w.recovered()
		return false
	case id == w.badID && !force:
		return false
	}
	return w.fetch()
}

// inForce reports whether id, read from Redis, is the identity of the rules
// in force: the same version and, when Redis keeps one, the same digest.
func (w *RedisWatcher) inForce(id Identity) bool {
	cur := w.set.Identity()
	return id.Version == cur.Version && (id.Digest == "" || id.Digest == cur.Digest)
}

// fetch reads the stored document and loads it when its version or digest
// differs from the Set's. It reports whether it took effect.
func (w *RedisWatcher) fetch() bool {
	ctx, cancel := context.WithTimeout(w.ctx, w.cfg.timeout)
	defer cancel()
	st, err := w.cfg.read(ctx, w.b, true)
	var id Identity
	if err == nil {
		id, err = w.cfg.identity(st)
	}
	if err != nil {
		w.fail(err)
		return false
	}
	if w.inForce(id) {
		w.recovered()
		return false
	}
	doc, err := w.cfg.parseStored(st)
	if err != nil {
		w.badID = id
		w.fail(err)
		return false
	}
	// Redis is the truth: the Set follows it, older or conflicting, and
	// says so (Set.admit).
	if err := w.set.Replace(doc, RedisSource, follow()); err != nil {
		w.stats.failures.Add(1) // Replace reported it
		w.badID, w.lastErr = id, err
		return false
	}
	w.stats.loads.Add(1)
	w.badID, w.lastErr = Identity{}, nil
	w.set.Logger().Info("ratewarden: rules loaded from redis", "key", w.cfg.docKey(),
		"version", doc.Version, "digest", ShortDigest(w.set.Digest()))
	return true
}

// fail counts a failure and reports it to the log and the reload hook,
// unless it is the one reported last (a Redis outage is reported once, not
// at every poll).
func (w *RedisWatcher) fail(err error) {
	w.stats.failures.Add(1)
	repeated := w.lastErr != nil && w.lastErr.Error() == err.Error()
	w.lastErr = err
	if repeated {
		return
	}
	id := w.set.Identity()
	w.set.Logger().Warn("ratewarden: rules in redis not loaded; the rules in force stay",
		"key", w.cfg.docKey(), "version_in_force", id.Version, "digest_in_force", ShortDigest(id.Digest), "err", err)
	w.set.TellReloadHook(RedisSource, err)
}

// recovered notes that Redis holds the rules in force.
func (w *RedisWatcher) recovered() {
	if w.lastErr != nil {
		id := w.set.Identity()
		w.set.Logger().Info("ratewarden: rules in redis readable again; they are the rules in force",
			"key", w.cfg.docKey(), "version", id.Version, "digest", ShortDigest(id.Digest))
	}
	w.lastErr = nil
}
